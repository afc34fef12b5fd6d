"""Start the ranks of one or more scenarios as forked processes of one torch-loaded parent.

    python spawn_ranks.py JOBS.json     (a list of {"script", "world", "out", "mode",
                                         "gloo_timeout_s"}; results go to JOBS.json.result)

Importing torch costs ~1.5 s of CPU per process; forking the ranks from a parent that imported it
once keeps a dozen multi-rank scenarios within the test budget on two cores. Every rank is still
its own process with its own gloo process group over TCP on 127.0.0.1 (env:// rendezvous); the
parent itself never joins a group. All jobs run at once, each on its own port.
"""

from __future__ import annotations

import json
import os
import runpy
import socket
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _child(job: dict, rank: int, port: int) -> None:
    out = job["out"]
    log = os.open(os.path.join(out, "logs", f"rank{rank}.log"),
                  os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.environ.update(
        RANK=str(rank),
        WORLD_SIZE=str(job["world"]),
        LOCAL_RANK=str(rank),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        GLOO_SOCKET_IFNAME="lo",
        FR_SCENARIO_OUT=out,
        FR_SCENARIO_MODE=job.get("mode", "on-demand"),
        TORCH_FR_DUMP_TEMP_FILE=os.path.join(out, "timeout", "fr_trace_rank_"),
    )
    if job.get("gloo_timeout_s"):
        os.environ["FR_GLOO_TIMEOUT_S"] = str(job["gloo_timeout_s"])
    script = os.path.join(HERE, job["script"])
    sys.argv = [script]
    sys.path.insert(0, HERE)
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 5
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _warm_symbolizer() -> None:
    """The first stack symbolization in a process costs ~2 s of CPU (torch loads its symbolizer);
    a pickle FR dump symbolizes the recorded stacks, so doing it once here, before the fork, saves
    every rank that cost. Only speed depends on this: the dumps are the same either way."""
    try:
        from torch._C._profiler import gather_traceback, symbolize_tracebacks
    except ImportError:
        return
    symbolize_tracebacks([gather_traceback(True, True, False)])


def main(jobs_path: str) -> int:
    import torch  # loaded once here, shared by every forked rank
    import torch.distributed  # noqa: F401

    _warm_symbolizer()

    with open(jobs_path, encoding="utf-8") as handle:
        jobs = json.load(handle)
    deadline = time.monotonic() + float(os.environ.get("FR_SCENARIO_DEADLINE_S", "120"))
    pids = {}  # pid -> (job index, rank)
    for index, job in enumerate(jobs):
        for sub in ("logs", "timeout", "control"):
            os.makedirs(os.path.join(job["out"], sub), exist_ok=True)
        port = _free_port()
        for rank in range(job["world"]):
            pid = os.fork()
            if pid == 0:
                _child(job, rank, port)
            pids[pid] = (index, rank)
    codes = {i: [None] * job["world"] for i, job in enumerate(jobs)}
    while pids and time.monotonic() < deadline:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            time.sleep(0.05)
            continue
        index, rank = pids.pop(pid)
        codes[index][rank] = os.waitstatus_to_exitcode(status)
    for pid, (index, rank) in pids.items():  # only our own children, by pid
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        codes[index][rank] = "killed at deadline"
    with open(jobs_path + ".result", "w", encoding="utf-8") as handle:
        json.dump([codes[i] for i in range(len(jobs))], handle)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
