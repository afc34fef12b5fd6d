"""Faults the verifier must survive (issue 8), beyond those test_verify_runs.py already covers
(a rank SIGKILLed between two collectives: test_cleanup_after_a_crash; user code that blocks
outside any collective: test_cleanup_after_the_time_limit; Ctrl-C during a replay:
test_ctrl_c_stops_every_rank). Each fault here is real: real gloo ranks, a real signal, a real port
held by another process, real forked workers. Each must end with a clear verdict within the
replay's time limit and leave no process, temporary file or descriptor behind.
"""

from __future__ import annotations

import signal
import socket
import uuid

import pytest
from test_verify_runs import assert_no_leftovers, isolated_tmp, open_fds, write  # noqa: F401 (a fixture)

from rankcheck.verify import run_script

pytestmark = [pytest.mark.verify, pytest.mark.slow]

pytest.importorskip("torch")

# Rank 1 dies while it is inside the second all_reduce: rank 0 only gets there two seconds later,
# so rank 1 is blocked in the collective when the timer fires.
DIES_IN_A_COLLECTIVE = """\
import os
import signal
import sys
import threading
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
x = torch.ones(2)
dist.all_reduce(x)
if dist.get_rank() == 1:
    if sys.argv[1] == "sigkill":  # the OOM killer's way
        threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGKILL)).start()
    else:  # a native crash or os._exit deep in a library
        threading.Timer(1.0, os._exit, (3,)).start()
else:
    time.sleep(3)
dist.all_reduce(x)
dist.destroy_process_group()
"""
COLLECTIVE_LINE = 20

# Many scripts fix the rendezvous port (29500 in the tutorials); here another process holds it.
FIXED_PORT = """\
import os
import sys

import torch
import torch.distributed as dist

os.environ["MASTER_PORT"] = sys.argv[1]
dist.init_process_group("gloo")
dist.barrier()
dist.destroy_process_group()
"""

# Data workers forked after init_process_group (what a DataLoader with workers does), still alive
# when the ranks diverge.
FORKS_WORKERS = """\
import multiprocessing

import torch
import torch.distributed as dist


dist.init_process_group("gloo")
workers = multiprocessing.get_context("fork").Pool(2)
print("sum", sum(workers.map(abs, range(-4, 4))))
x = torch.ones(2)
dist.all_reduce(x)
if dist.get_rank() == 0:
    dist.all_reduce(x)
else:
    dist.barrier()
dist.destroy_process_group()
"""


@pytest.mark.parametrize("how, exit_code", [("sigkill", -signal.SIGKILL), ("exit", 3)])
def test_rank_that_dies_inside_a_collective(tmp_path, isolated_tmp, how: str, exit_code: int) -> None:  # noqa: F811
    script = write(tmp_path, "dies.py", DIES_IN_A_COLLECTIVE)
    tag = uuid.uuid4().hex
    before = open_fds()
    result = run_script(script, [how], timeout=30.0, env=[("RANKCHECK_TEST_TAG", tag)], announce=None)
    assert not result.timed_out and result.elapsed < 30.0
    survivor, victim = result.ranks
    # The rank that died is named with how it died; the one left alone in the collective says
    # where it was (gloo tells it its peer went away).
    assert victim.state == "died" and victim.exit_code == exit_code, result.to_dict()
    assert result.outcome in ("error", "diverged"), result.to_dict()
    if result.outcome == "error":
        assert survivor.error is not None and survivor.error.frames[0].line == COLLECTIVE_LINE, result.to_dict()
    assert_no_leftovers(tag)
    assert list(isolated_tmp.iterdir()) == []
    assert open_fds() == before


def test_rendezvous_port_already_in_use(tmp_path, isolated_tmp) -> None:  # noqa: F811
    script = write(tmp_path, "fixed_port.py", FIXED_PORT)
    tag = uuid.uuid4().hex
    before = open_fds()
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    holder.listen(4)
    port = holder.getsockname()[1]
    try:
        result = run_script(script, [str(port)], timeout=60.0, env=[("RANKCHECK_TEST_TAG", tag)], announce=None)
    finally:
        holder.close()
    # Rank 0 cannot host the store and says why; rank 1 connected to the other process's port and
    # would wait there for torch's init timeout (30 minutes): the replay stops at once, an error
    # (not a hang at the time limit), and says where rank 1 was.
    assert result.outcome == "error" and not result.timed_out, result.to_dict()
    assert result.elapsed < 30.0
    host, guest = result.ranks
    assert host.state == "raised" and host.error is not None, result.to_dict()
    assert "EADDRINUSE" in host.error.message or "address already in use" in host.error.message.lower()
    assert guest.state == "killed" and guest.stack and guest.stack[0].line == 8, result.to_dict()
    assert_no_leftovers(tag)
    assert list(isolated_tmp.iterdir()) == []
    assert open_fds() == before


def test_script_that_forks_its_own_workers(tmp_path, isolated_tmp) -> None:  # noqa: F811
    script = write(tmp_path, "forks.py", FORKS_WORKERS)
    tag = uuid.uuid4().hex  # the forked workers inherit it: a live one is a leftover
    before = open_fds()
    result = run_script(script, timeout=30.0, env=[("RANKCHECK_TEST_TAG", tag)], announce=None)
    assert result.outcome == "diverged", result.to_dict()
    assert "rank 0 entered all_reduce #2" in result.divergence.summary
    assert "rank 1 entered barrier #2" in result.divergence.summary
    assert_no_leftovers(tag)
    assert list(isolated_tmp.iterdir()) == []
    assert open_fds() == before
