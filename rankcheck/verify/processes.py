"""The rank processes: their environment, and how they are signalled, killed and reaped.

Each rank leads its own session (start_new_session=True), so one signal to its process group
reaches everything it started; the launcher owns the loop around them.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from rankcheck.verify.launcher import LaunchSpec

OUTPUT_TAIL = 6000
FLIGHT_BUFFER = "2000"

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def rank_env(spec: LaunchSpec, rank: int, master_port: int, config_path: str, run_id: str) -> dict:
    env = dict(os.environ)
    env.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(spec.nproc),
        LOCAL_WORLD_SIZE=str(spec.nproc),
        GROUP_RANK="0",
        ROLE_RANK=str(rank),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(master_port),
        RANKCHECK_VERIFY_CONFIG=config_path,
        RANKCHECK_VERIFY_RUN=run_id,
        PYTHONUNBUFFERED="1",
    )
    # As torchrun does: one intra-op thread per rank unless the user chose otherwise.
    env.setdefault("OMP_NUM_THREADS", "1")
    if spec.mode != "plain":
        env.setdefault("TORCH_FR_BUFFER_SIZE", FLIGHT_BUFFER)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if _PACKAGE_PARENT not in paths:
        paths.append(_PACKAGE_PARENT)  # so the rank can import rankcheck; after the user's own
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(dict(spec.env))
    return env


class RankProcess:
    def __init__(self, rank: int, process: subprocess.Popen, output_path: str) -> None:
        self.rank = rank
        self.process = process
        self.output_path = output_path
        self.conn: Optional[socket.socket] = None
        self.exit_code: Optional[int] = None

    def alive(self) -> bool:
        if self.exit_code is None:
            code = self.process.poll()
            if code is not None:
                self.exit_code = code
        return self.exit_code is None

    def kill(self) -> None:
        """SIGKILL the rank's whole process group (it leads its own session)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.process.poll() is None:
            try:
                self.process.kill()
            except ProcessLookupError:
                pass

    def signal(self, signum: int) -> None:
        try:
            os.kill(self.process.pid, signum)
        except ProcessLookupError:
            pass

    def output_tail(self) -> str:
        try:
            with open(self.output_path, "rb") as handle:
                handle.seek(0, os.SEEK_END)
                size = handle.tell()
                handle.seek(max(0, size - OUTPUT_TAIL))
                return handle.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
