"""Start the ranks, referee them, and always clean up.

Each rank is a real process (`python -m rankcheck.verify.rank_main`) in its own session, so the
verifier can kill it together with anything it started (one signal to its process group). The
verifier listens on a loopback port for the ranks' reports and answers each collective with "go"
or "stop" (coordinator.py decides). Every path out (verdict, crash, time limit, Ctrl-C, an
exception of our own) goes through one `finally` that kills and reaps every rank, closes the
sockets and removes the temporary directory. No step blocks without a deadline.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Optional

from rankcheck.verify.coordinator import Coordinator
from rankcheck.verify.frames import parse_faulthandler
from rankcheck.verify.processes import RankProcess, free_port, rank_env
from rankcheck.verify.vtypes import Frame, RankOutcome, RunResult, short_path
from rankcheck.verify.wire import LineBuffer, encode

POLL_SECONDS = 0.01
STOP_GRACE = 1.0  # for held ranks to report what they saw after a divergence
EXIT_GRACE = 2.0  # for ranks that reported their end to leave on their own
STACK_GRACE = 0.5  # for ranks to write their stacks when the time limit strikes
LEAVE_GRACE = 1.0  # a rank that ended waits this long for the others to reach a checkpoint


@dataclass(frozen=True)
class LaunchSpec:
    mode: str  # "script" | "function" | "plain"
    path: str  # absolute path of the script or of the function's module
    args: tuple = ()
    function: str = ""
    fixture: str = ""
    nproc: int = 2
    timeout: float = 60.0
    cwd: str = ""
    watch: dict = field(default_factory=dict)  # {abs path: [lines]}
    pg_timeout: Optional[float] = None  # plain mode: the gloo timeout (torchrun-style baseline)
    python: str = sys.executable
    env: tuple = ()  # extra (name, value) pairs for the ranks

    def describe(self) -> str:
        target = self.path if self.mode != "function" else f"{self.path}::{self.function}"
        shown = short_path(target)
        words = " ".join(self.args)
        if self.mode == "function":
            fixture = f" with arguments from {self.fixture}" if self.fixture else ""
            what = f"call {shown}(){fixture}"
        else:
            what = f"run `python {shown}{' ' + words if words else ''}`"
        return (
            f"rankcheck verify: about to {what} on {self.nproc} ranks "
            f"(gloo on CPU, time limit {self.timeout:g} s)"
        )


def mentions_cuda(path: str, limit: int = 400) -> bool:
    """Does the target's directory tree mention CUDA at all? (Then the ranks rewrite devices.)"""
    top = os.path.dirname(os.path.abspath(path))
    seen = 0
    for directory, subdirs, files in os.walk(top):
        subdirs[:] = [d for d in subdirs if not d.startswith(".") and d not in _SKIP_DIRS]
        for name in files:
            if not name.endswith(".py"):
                continue
            seen += 1
            if seen > limit:
                return True  # too large to tell cheaply: rewrite devices to be safe
            try:
                with open(os.path.join(directory, name), "rb") as handle:
                    if b"cuda" in handle.read():
                        return True
            except OSError:
                continue
    return False


_SKIP_DIRS = {"__pycache__", "site-packages", "node_modules", "venv", "build", "dist"}


class Replay:
    """One replay of one target on N ranks. Use `run()` once."""

    def __init__(self, spec: LaunchSpec, announce: Optional[Callable[[str], None]] = None) -> None:
        self.spec = spec
        self.announce = announce
        self.run_id = uuid.uuid4().hex[:12]
        self.coordinator = Coordinator(spec.nproc)
        self.ranks: list[RankProcess] = []
        self.selector = selectors.DefaultSelector()
        self.buffers: dict[socket.socket, LineBuffer] = {}
        self.conn_rank: dict[socket.socket, int] = {}
        self.timed_out = False
        self.leaving: dict[int, float] = {}  # ranks that reported their end -> when
        self.started = 0.0
        self.verdict_at = 0.0

    # ---- the public entry --------------------------------------------------------------------
    def run(self) -> RunResult:
        spec = self.spec
        tmp = tempfile.mkdtemp(prefix="rankcheck-verify-")
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.started = time.monotonic()
        outcomes: list[RankOutcome] = []
        try:
            server.bind(("127.0.0.1", 0))
            server.listen(max(8, spec.nproc))
            server.setblocking(False)
            self.selector.register(server, selectors.EVENT_READ, None)
            config_path = self._write_config(tmp, server.getsockname()[1])
            if self.announce is not None:
                self.announce(spec.describe())
            self._spawn(tmp, config_path)
            if spec.mode == "plain":
                self._wait_plain()
            else:
                self._referee(server, tmp)
        finally:
            self._cleanup(server)
            outcomes = self._outcomes(tmp)
            shutil.rmtree(tmp, ignore_errors=True)
        wall = time.monotonic() - self.started
        return self._result(outcomes, wall)

    # ---- start -------------------------------------------------------------------------------
    def _write_config(self, tmp: str, port: int) -> str:
        spec = self.spec
        config = {
            "mode": spec.mode,
            "path": spec.path,
            "args": list(spec.args),
            "function": spec.function,
            "fixture": spec.fixture,
            "port": port,
            "watch": {p: sorted(lines) for p, lines in spec.watch.items()},
            "stack_file": os.path.join(tmp, "rank{rank}.stack"),
            "parent_pid": os.getpid(),
            "pg_timeout": spec.pg_timeout,
            "mentions_cuda": mentions_cuda(spec.path),
        }
        path = os.path.join(tmp, "config.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(config, handle)
        return path

    def _spawn(self, tmp: str, config_path: str) -> None:
        spec = self.spec
        master_port = free_port()
        command = [spec.python, "-m", "rankcheck.verify.rank_main"]
        for rank in range(spec.nproc):
            output_path = os.path.join(tmp, f"rank{rank}.out")
            with open(output_path, "wb") as output:
                process = subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    cwd=spec.cwd or None,
                    env=rank_env(spec, rank, master_port, config_path, self.run_id),
                    start_new_session=True,
                )
            self.ranks.append(RankProcess(rank, process, output_path))

    # ---- referee -----------------------------------------------------------------------------
    def _referee(self, server: socket.socket, tmp: str) -> None:
        deadline = self.started + self.spec.timeout
        coordinator = self.coordinator
        while True:
            self._pump(server, POLL_SECONDS)
            self._reap()
            released = coordinator.evaluate()
            for rank in released:
                self._send(rank, {"t": "go"})
            if coordinator.divergence is not None:
                self.verdict_at = time.monotonic()
                self._stop_held()
                self._let_leave(force=True)
                return
            if coordinator.all_terminal():
                self.verdict_at = time.monotonic()
                self._let_leave(force=True)
                self._await_exit(EXIT_GRACE)
                return
            if coordinator.rendezvous_broken():
                # The others can only wait for torch's init timeout: stop now, say where they are.
                self.verdict_at = time.monotonic()
                self._collect_stacks(tmp)
                return
            self._let_leave()
            if time.monotonic() >= deadline:
                self.verdict_at = time.monotonic()
                self.timed_out = True
                for state in coordinator.ranks.values():
                    if state.waiting is not None:
                        state.blocked = state.waiting
                self._collect_stacks(tmp)
                return

    def _pump(self, server: socket.socket, wait: float) -> None:
        for key, _ in self.selector.select(timeout=wait):
            sock = key.fileobj
            if sock is server:
                self._accept(server)
            else:
                self._read(sock)  # type: ignore[arg-type]

    def _accept(self, server: socket.socket) -> None:
        try:
            conn, _ = server.accept()
        except BlockingIOError:
            return
        conn.setblocking(False)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffers[conn] = LineBuffer()
        self.selector.register(conn, selectors.EVENT_READ, None)

    def _read(self, conn: socket.socket) -> bool:
        """Read what is there; False at end of stream (the connection is then closed)."""
        try:
            data = conn.recv(1 << 16)
        except BlockingIOError:
            return True
        except OSError:
            data = b""
        if not data:
            self._forget(conn)
            return False
        for message in self.buffers[conn].feed(data):
            self._handle(conn, message)
        return True

    def _handle(self, conn: socket.socket, message: dict) -> None:
        kind = message.get("t")
        coordinator = self.coordinator
        if kind == "hello":
            rank = int(message["rank"])
            self.conn_rank[conn] = rank
            self.ranks[rank].conn = conn
        elif kind == "enter":
            coordinator.enter(message)
        elif kind == "note":
            coordinator.note(int(message["rank"]), str(message["text"]))
        elif kind == "done":
            coordinator.done(message)
            self.leaving[int(message["rank"])] = time.monotonic()
        elif kind == "stopped":
            coordinator.stopped(message)

    def _drain(self, rank: RankProcess) -> None:
        """Everything a rank sent before it exited (its last report may still be unread)."""
        conn = rank.conn
        if conn is None or conn not in self.buffers:
            return
        conn.settimeout(0.5)
        try:
            while True:
                data = conn.recv(1 << 16)
                if not data:
                    break
                for message in self.buffers[conn].feed(data):
                    self._handle(conn, message)
        except OSError:
            pass
        self._forget(conn)

    def _forget(self, conn: socket.socket) -> None:
        try:
            self.selector.unregister(conn)
        except (KeyError, ValueError):
            pass
        self.buffers.pop(conn, None)
        conn.close()

    def _reap(self) -> None:
        for rank in self.ranks:
            state = self.coordinator.ranks[rank.rank]
            if not state.terminal and not rank.alive():
                self._drain(rank)
                self.coordinator.died(rank.rank, rank.exit_code)

    def _send(self, rank: int, message: dict) -> None:
        conn = self.ranks[rank].conn
        if conn is None or conn not in self.buffers:
            return
        try:
            conn.setblocking(True)
            conn.sendall(encode(message))
        except OSError:
            pass
        finally:
            try:
                conn.setblocking(False)
            except OSError:
                pass

    def _let_leave(self, force: bool = False) -> None:
        """Release ranks that ended once every other rank is ended or held at a checkpoint (so no
        collective with them can be in flight), or after LEAVE_GRACE."""
        now = time.monotonic()
        states = self.coordinator.ranks
        for rank, since in list(self.leaving.items()):
            settled = all(
                s.terminal or s.waiting is not None for r, s in states.items() if r != rank
            )
            if force or settled or now - since >= LEAVE_GRACE:
                self._send(rank, {"t": "bye"})
                del self.leaving[rank]

    def _stop_held(self) -> None:
        """Tell the ranks held before a collective to report and leave; the rest are killed."""
        held = self.coordinator.waiting_ranks()
        for rank in held:
            self._send(rank, {"t": "stop"})
        deadline = time.monotonic() + STOP_GRACE
        while time.monotonic() < deadline:
            if all(self.coordinator.ranks[r].terminal for r in held):
                break
            self._pump_no_accept(POLL_SECONDS)
            for r in held:
                if not self.ranks[r].alive() and not self.coordinator.ranks[r].terminal:
                    self._drain(self.ranks[r])
                    if not self.coordinator.ranks[r].terminal:
                        self.coordinator.stopped({"rank": r})

    def _pump_no_accept(self, wait: float) -> None:
        for key, _ in self.selector.select(timeout=wait):
            if key.fileobj in self.buffers:
                self._read(key.fileobj)

    def _await_exit(self, grace: float) -> None:
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(r.alive() for r in self.ranks):
            time.sleep(POLL_SECONDS)

    def _collect_stacks(self, tmp: str) -> None:
        live = [r for r in self.ranks if r.alive()]
        for rank in live:
            rank.signal(signal.SIGUSR1)
        time.sleep(STACK_GRACE if live else 0)
        self._pump_no_accept(0)
        for rank in live:
            path = os.path.join(tmp, f"rank{rank.rank}.stack")
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    text = handle.read()
            except OSError:
                continue
            frames, in_torch = parse_faulthandler(text)
            state = self.coordinator.ranks[rank.rank]
            state.stack = tuple(Frame(p, line, fn) for p, line, fn in frames)
            state.stack_in_torch = in_torch

    def _wait_plain(self) -> None:
        deadline = self.started + self.spec.timeout
        while any(r.alive() for r in self.ranks):
            if time.monotonic() >= deadline:
                self.timed_out = True
                break
            time.sleep(POLL_SECONDS)
        self.verdict_at = time.monotonic()

    # ---- always ------------------------------------------------------------------------------
    def _cleanup(self, server: socket.socket) -> None:
        for rank in self.ranks:
            rank.kill()
        for rank in self.ranks:
            try:
                rank.exit_code = rank.process.wait(timeout=10)
            except subprocess.TimeoutExpired:  # a process stuck in the kernel; nothing more to do
                pass
        for conn in list(self.buffers):
            self._forget(conn)
        try:
            self.selector.unregister(server)
        except (KeyError, ValueError):
            pass
        server.close()
        self.selector.close()

    def _outcomes(self, tmp: str) -> list[RankOutcome]:
        outcomes = []
        for rank in self.ranks:
            state = self.coordinator.ranks[rank.rank]
            if self.spec.mode == "plain":
                state.state = "finished" if rank.exit_code == 0 else "died"
                state.exit_code = rank.exit_code
            outcomes.append(state.outcome(rank.output_tail()))
        return outcomes

    def _result(self, outcomes: list[RankOutcome], wall: float) -> RunResult:
        spec = self.spec
        unsupported = ""
        for state in self.coordinator.ranks.values():
            if state.gpu_only and state.error is not None:
                unsupported = (
                    f"rank {state.rank} needs a GPU: {state.error.type}: {state.error.message}"
                )
                break
        notes: list[str] = []
        for outcome in outcomes:
            for text in outcome.notes:
                if text not in notes:
                    notes.append(text)
        verdict_at = self.verdict_at or (self.started + wall)
        target = spec.path if spec.mode != "function" else f"{spec.path}::{spec.function}"
        return RunResult(
            target=target,
            command=(spec.python, target, *spec.args),
            nproc=spec.nproc,
            ranks=tuple(outcomes),
            divergence=self.coordinator.divergence,
            timed_out=self.timed_out,
            timeout=spec.timeout,
            elapsed=verdict_at - self.started,
            wall=wall,
            unsupported=unsupported,
            run_id=self.run_id,
            notes=tuple(notes),
        )


def replay(spec: LaunchSpec, announce: Optional[Callable[[str], None]] = None) -> RunResult:
    return Replay(spec, announce).run()
