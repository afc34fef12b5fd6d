"""The launcher side: `rankcheck run -- LAUNCHER ...` and `rankcheck dump` (torch-free).

`run` arms every rank without a code change (an injected sitecustomize wraps
init_process_group; the flight-recorder and error-handling variables are set before torch reads
them), passes the launcher's output through, and watches the heartbeats from outside: a rank
whose process vanished without a word (SIGKILL, the OOM killer) is a crash the ranks themselves
cannot report, because the launcher tears the job down within a second. It then writes the
bundle with every heartbeat and each rank's exit code from the launcher's failure summary.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from typing import Deque, Dict, List, Optional

from rankcheck.runtime import bundle as layout
from rankcheck.runtime.settings import DEFAULT_FR_BUFFER, Settings, env_names

INJECT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inject")
# torchrun's failure summary: "rank      : 1 (local_rank: 1)" then "exitcode  : -9 (pid: 123)"
_SUMMARY = re.compile(r"rank\s*:\s*(\d+)[^\n]*\n\s*exitcode\s*:\s*(-?\d+)")


def child_environment(dump_dir: str, job: Optional[str], launcher: str, settings: Dict[str, float],
                      source: Optional[str]) -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([INJECT_DIR] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.update(RANKCHECK_ARM="1", RANKCHECK_DUMP_DIR=os.path.abspath(dump_dir), RANKCHECK_LAUNCHER=launcher)
    if job:  # else the ranks name the job after their rendezvous, the same on every node
        env["RANKCHECK_JOB"] = job
    if source:
        env["RANKCHECK_SOURCE"] = os.path.abspath(source)
    for name, number in settings.items():
        env[env_names()[name]] = str(number)
    for name, value in (("TORCH_FR_BUFFER_SIZE", DEFAULT_FR_BUFFER), ("TORCH_NCCL_ASYNC_ERROR_HANDLING", "3"),
                        ("TORCH_NCCL_DUMP_ON_TIMEOUT", "1")):
        env.setdefault(name, value)
    env.setdefault("TORCH_FR_DUMP_TEMP_FILE", os.path.join(os.path.abspath(dump_dir), layout.LIVE, "fr_timeout_rank_"))
    return env


def process_gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] == "Z"
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def exit_codes(output: str) -> Dict[int, int]:
    return {int(rank): int(code) for rank, code in _SUMMARY.findall(output)}


class Launcher:
    def __init__(self, command: List[str], dump_dir: str, settings: Dict[str, float], source: Optional[str],
                 job: Optional[str] = None) -> None:
        self.command = command
        self.dump_dir = os.path.abspath(dump_dir)
        self.host = socket.gethostname()
        self.tag = f"{self.host}:{os.getpid()}"  # the ranks' heartbeats name their launcher
        self.env = child_environment(self.dump_dir, job, self.tag, settings, source)
        self.settings = Settings(interval_s=float(settings.get("interval_s", Settings.interval_s)))
        self.output: Deque[str] = deque(maxlen=400)
        self.crash_bundle: Optional[str] = None
        self.crashed: List[int] = []
        self.stopping = False

    def _tee(self, stream) -> None:
        for line in iter(stream.readline, ""):
            self.output.append(line)
            sys.stderr.write(line)
            sys.stderr.flush()

    def _watch(self) -> None:
        for job in layout.jobs_in(self.dump_dir):
            beats = layout.read_heartbeats(self.dump_dir, job)
            if any(b.get("launcher") == self.tag for b in beats.values()):
                self._watch_job(job, beats)

    def _watch_job(self, job: str, beats: Dict[int, dict]) -> None:
        vanished = [r for r, b in beats.items()
                    if b.get("state") == "running" and b.get("launcher") == self.tag and process_gone(int(b.get("pid", 0)))]
        if vanished and self.crash_bundle is None and not self.stopping:
            self.crashed = sorted(vanished)
            folder = layout.new_bundle(self.dump_dir, "crash")
            world = max(int(b.get("world_size", 0) or 0) for b in beats.values()) if beats else 0
            layout.write_json(os.path.join(folder, layout.JOB_FILE), {
                "job": job, "world_size": max([world] + [r + 1 for r in beats]), "trigger": "crash",
                "detection": {"kind": "crash", "gone": self.crashed}, "detected_by": "launcher",
                "detected_at": time.time(), "source_root": self.env.get("RANKCHECK_SOURCE", ""),
            })
            layout.write_json(os.path.join(folder, "heartbeats.json"), {str(r): b for r, b in beats.items()})
            layout.request_evidence(self.dump_dir, job, folder, "crash")
            self.crash_bundle = folder

    def run(self) -> int:
        from rankcheck.fr.bundle import analyze_bundle, write_verdict

        layout.make_dir(self.dump_dir)
        try:
            child = subprocess.Popen(self.command, env=self.env, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
        except OSError as exc:
            print(f"rankcheck run: cannot start {self.command[0]}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        tee = threading.Thread(target=self._tee, args=(child.stderr,), daemon=True)
        tee.start()

        def forward(signum, _frame):
            self.stopping = True  # what vanishes now was stopped, not crashed
            try:
                os.killpg(child.pid, signum)
            except OSError:
                pass

        previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            while child.poll() is None:
                self._watch()
                time.sleep(min(0.2, self.settings.interval_s))
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
        tee.join(timeout=5)
        code = child.returncode
        if self.crash_bundle is not None:
            codes = exit_codes("".join(self.output))
            layout.write_json(os.path.join(self.crash_bundle, layout.LAUNCHER_FILE), {
                "command": self.command, "exitcode": code,
                "ranks": {str(r): {"exitcode": c} for r, c in codes.items()},
            })
            verdict = analyze_bundle(self.crash_bundle)
            write_verdict(self.crash_bundle, verdict)
            sys.stderr.write(verdict.text)
        return code if code >= 0 else 128 - code


def dump(dump_dir: str, job: Optional[str], wait_s: float, fresh_s: float = 10.0) -> int:
    """Ask a running armed job for its evidence; print the verdict once every rank answered."""
    from rankcheck.fr.bundle import analyze_bundle, write_verdict

    jobs = layout.jobs_in(dump_dir)
    now = time.time()
    live = sorted((j for j, t in jobs.items() if now - t < fresh_s), key=lambda j: -jobs[j])
    if job is not None:
        live = [j for j in live if j == job]
    if not live:
        print(f"rankcheck dump: no armed job is publishing heartbeats in {dump_dir}"
              + (f" under the name {job}" if job else ""), file=sys.stderr)
        return 2
    target = live[0]
    beats = layout.read_heartbeats(dump_dir, target)
    folder = layout.new_bundle(dump_dir, "dump")
    layout.write_json(os.path.join(folder, layout.JOB_FILE), {
        "job": target, "world_size": max(beats) + 1, "trigger": "dump", "detected_by": "rankcheck dump",
        "detected_at": now, "detection": {"kind": "dump", "gone": []},
    })
    layout.write_json(os.path.join(folder, "heartbeats.json"), {str(r): b for r, b in beats.items()})
    layout.request_evidence(dump_dir, target, folder, "dump")
    deadline = time.time() + wait_s
    while time.time() < deadline and not all(
        os.path.exists(os.path.join(layout.rank_dir(folder, r), layout.COMPLETE)) for r in beats
    ):
        time.sleep(0.1)
    verdict = analyze_bundle(folder)
    write_verdict(folder, verdict)
    sys.stdout.write(verdict.text)
    return 1 if verdict.is_hang else 0
