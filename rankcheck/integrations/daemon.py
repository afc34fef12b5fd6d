"""The daemon: one project's analysis kept in a background process, as `dmypy` keeps mypy's.

`rankcheck check --daemon ...` asks a daemon for the project (one per project root, rankcheck
installation and Python) to run the check, starting one when none is running. The daemon holds a
`Workspace` (driver/workspace.py): after an edit it summarizes the edited files again and interprets
only what read the edited code, so a check of a whole large project costs about what the edit
changed instead of a full analysis. The findings are those of a check without the daemon (but
see driver/workspace.py on recursion through calls resolved from values); the client formats them and sets the exit code
as usual.

`rankcheck daemon status` and `rankcheck daemon stop` (both take `--root`) ask it how it is and
end it. It also ends after IDLE_SECONDS without a request. Requests are JSON, answers are pickled
findings; the socket lives in a directory only this user can enter (`$XDG_RUNTIME_DIR`, else the
temporary directory), and a daemon of another rankcheck or Python has another socket. POSIX only:
elsewhere, and whenever the daemon cannot be reached or fails, the check runs in the calling
process and says so on stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

IDLE_SECONDS = 30 * 60
START_SECONDS = 30.0  # for a new daemon to listen (it analyses nothing before it does)
_HEADER = struct.Struct(">I")
_MAX_SOCKET_PATH = 100  # sun_path holds 104-108 bytes depending on the system


class DaemonUnavailable(Exception):
    """The daemon cannot be used; the message says why (the caller checks in-process instead)."""


def supported() -> bool:
    return hasattr(socket, "AF_UNIX") and hasattr(os, "getuid") and hasattr(os, "fork")


def socket_path(root: Path) -> Path:
    """Where the daemon for this project root, installation and Python listens."""
    from rankcheck.driver.cache import package_fingerprint

    key = hashlib.sha256(f"{root}\0{sys.executable}\0{package_fingerprint()}".encode()).hexdigest()[:20]
    for base in (os.environ.get("XDG_RUNTIME_DIR"), tempfile.gettempdir(), "/tmp"):
        if base:
            path = Path(base) / f"rankcheck-{os.getuid()}" / f"{key}.sock"
            if len(str(path)) <= _MAX_SOCKET_PATH:
                return path
    raise DaemonUnavailable("no directory with a short enough path for a socket")


def _private_directory(path: Path) -> None:
    """Create the socket's directory for this user only; refuse one that others can enter."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = path.stat()
    if st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise DaemonUnavailable(f"{path} is not private to this user (owner {st.st_uid}, mode {oct(st.st_mode & 0o777)})")


# ------------------------------------------------------------------------------------------------
# framing


def _send(conn: socket.socket, payload: bytes) -> None:
    conn.sendall(_HEADER.pack(len(payload)) + payload)


def _receive(conn: socket.socket) -> bytes:
    header = _exactly(conn, _HEADER.size)
    return _exactly(conn, _HEADER.unpack(header)[0])


def _exactly(conn: socket.socket, size: int) -> bytes:
    chunks = []
    while size:
        chunk = conn.recv(min(size, 1 << 20))
        if not chunk:
            raise ConnectionError("the other side closed the connection")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


# ------------------------------------------------------------------------------------------------
# the client


def _connect(path: Path, timeout: Optional[float]) -> Optional[socket.socket]:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    try:
        conn.connect(str(path))
    except OSError:
        conn.close()
        return None
    return conn


def _start(path: Path, root: Path) -> None:
    _private_directory(path.parent)
    log = open(path.with_suffix(".log"), "ab")
    try:
        subprocess.Popen(
            [sys.executable, "-m", "rankcheck", "daemon", "serve", "--socket", str(path), "--root", str(root)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # not the terminal's Ctrl-C, not the caller's process group
            close_fds=True,
        )
    finally:
        log.close()


def request(root: Path, message: Dict[str, Any], start: bool = True, timeout: Optional[float] = None) -> Any:
    """Send one request to the project's daemon (starting it if asked) and return its answer."""
    if not supported():
        raise DaemonUnavailable("not supported on this platform")
    path = socket_path(root)
    conn = _connect(path, timeout)
    if conn is None:
        if not start:
            raise DaemonUnavailable("no daemon is running for this project")
        _start(path, root)
        deadline = time.monotonic() + START_SECONDS
        while conn is None:
            if time.monotonic() > deadline:
                raise DaemonUnavailable(f"the daemon did not start; see {path.with_suffix('.log')}")
            time.sleep(0.05)
            conn = _connect(path, timeout)
    try:
        _send(conn, json.dumps(message).encode())
        answer = pickle.loads(_receive(conn))
    except (OSError, ConnectionError, pickle.UnpicklingError, EOFError) as exc:
        raise DaemonUnavailable(f"lost the daemon: {exc}") from exc
    finally:
        conn.close()
    if isinstance(answer, dict) and answer.get("error"):
        raise DaemonUnavailable(f"the daemon failed:\n{answer['error']}")
    return answer


def check(paths: Sequence[str], root: Path, options: Dict[str, Any]):
    """`api.run_check(paths, root=root, **options)`, run by the project's daemon."""
    from rankcheck.api import CheckResult

    answer = request(root, {"command": "check", "cwd": os.getcwd(), "paths": list(paths), "options": options})
    findings, files_checked, files_read, config_errors, hidden_in_tests = answer["result"]
    return CheckResult(findings, files_checked=files_checked, files_read=files_read, config_errors=config_errors, root=root,
                       hidden_in_tests=hidden_in_tests)


# ------------------------------------------------------------------------------------------------
# the daemon


class _Server:
    def __init__(self, path: Path, root: Path, idle: float) -> None:
        from rankcheck.driver.workspace import Workspace

        self.path = path
        self.root = root
        self.idle = idle
        self.workspace = Workspace()
        self.started = time.time()
        self.checks = 0

    def handle(self, message: Dict[str, Any]) -> tuple:
        """The answer, and whether to stop after sending it."""
        command = message.get("command")
        if command == "stop":
            return {"stopped": os.getpid()}, True
        if command == "status":
            return {"pid": os.getpid(), "root": str(self.root), "started": self.started, "checks": self.checks}, False
        if command != "check":
            return {"error": f"unknown command {command!r}"}, False
        from rankcheck.api import run_check

        os.chdir(message["cwd"])  # display paths are relative to the caller's directory
        result = run_check(message["paths"], workspace=self.workspace, **message["options"])
        self.checks += 1
        return {"result": (result.findings, result.files_checked, result.files_read, result.config_errors, result.hidden_in_tests)}, False

    def serve(self, listener: socket.socket) -> None:
        listener.settimeout(self.idle)
        while True:
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                return
            with conn:
                conn.settimeout(None)
                try:
                    message = json.loads(_receive(conn).decode())
                    answer, stop = self.handle(message)
                except Exception:
                    answer, stop = {"error": traceback.format_exc()}, False
                try:
                    _send(conn, pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
                except OSError:
                    pass  # the client went away
            if stop:
                return


def serve(path: Path, root: Path, idle: float = IDLE_SECONDS) -> int:
    import fcntl

    _private_directory(path.parent)
    lock = open(path.with_suffix(".lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another daemon for this socket is starting or running
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if path.exists():
            path.unlink()  # left by a daemon that was killed: the lock says none is running
        listener.bind(str(path))
        os.chmod(path, 0o600)
        listener.listen(16)
        _Server(path, root, idle).serve(listener)
    finally:
        listener.close()
        try:
            path.unlink()
        except OSError:
            pass
        lock.close()
    return 0


# ------------------------------------------------------------------------------------------------
# `rankcheck daemon ...`


def main(argv: Sequence[str]) -> int:
    from rankcheck.driver.discover import find_root, safe_resolve

    parser = argparse.ArgumentParser(prog="rankcheck daemon", description="the background process of `rankcheck check --daemon`")
    parser.add_argument("action", choices=["status", "stop", "serve"])
    parser.add_argument("--root", help="project root (default: nearest pyproject.toml above the current directory)")
    parser.add_argument("--socket", help=argparse.SUPPRESS)
    parser.add_argument("--idle-seconds", type=float, default=IDLE_SECONDS, help=argparse.SUPPRESS)
    args = parser.parse_args(list(argv))
    root = safe_resolve(Path(args.root)) if args.root else find_root([Path.cwd()])
    try:
        if args.action == "serve":
            return serve(Path(args.socket) if args.socket else socket_path(root), root, args.idle_seconds)
        answer = request(root, {"command": args.action}, start=False, timeout=10.0)
    except DaemonUnavailable as exc:
        print(f"rankcheck daemon: {exc}")
        return 1 if args.action == "status" else 0
    if args.action == "status":
        uptime = time.time() - answer["started"]
        print(f"rankcheck daemon: running (pid {answer['pid']}) for {answer['root']}, up {uptime:.0f} s, {answer['checks']} checks")
    else:
        print(f"rankcheck daemon: stopped (pid {answer['stopped']})")
    return 0
