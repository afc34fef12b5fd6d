"""`rankcheck verify` end to end: real gloo ranks, real subprocesses, real stdio.

The seed scenario, the verdicts, GPU substitution, function targets, and proof that every path out
(confirmed hang, crash, time limit, Ctrl-C) leaves no process, temporary file or descriptor behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from rankcheck.ftypes import Finding, Guard, Location
from rankcheck.verify import run_function, run_script, verify_findings

pytestmark = [pytest.mark.verify, pytest.mark.slow]

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

SEED = """\
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    grads = torch.ones(8)
    dist.all_reduce(grads)
    if rank == 0:
        metric = torch.tensor(2.0)
        dist.all_reduce(metric)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
"""
SEED_EXTRA_LINE = 12  # the all_reduce only rank 0 calls
SEED_GUARD_LINE = 10
SEED_FIRST_LINE = 9


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def cli(args, cwd: Path, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    full_env = dict(os.environ, PYTHONPATH=str(REPO))
    full_env.update(env or {})
    return subprocess.run(
        [PYTHON, "-m", "rankcheck.verify.cli", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=180,
        **kwargs,
    )


# ---- leftovers: processes, temporary files, descriptors ------------------------------------------
def _live_pids() -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":  # a zombie has already exited; its parent may not reap it
                pids.append(int(entry))
    return pids


def _parent_of(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return -1


def _has_env(pid: int, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return needle in handle.read()
    except OSError:
        return False


def _is_multiprocessing_helper(pid: int) -> bool:
    """The forkserver / resource tracker that multiprocessing keeps for this pytest process after
    a process pool (rankcheck's parallel summarize, run by other tests in the same session) shut
    down: they belong to the test process, not to anything the verifier started."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            cmdline = handle.read()
    except OSError:
        return False
    return b"multiprocessing.forkserver" in cmdline or b"multiprocessing.resource_tracker" in cmdline


def leftovers(tag: str) -> list[int]:
    """Live processes that are our children or carry the test's tag in their environment."""
    me = os.getpid()
    needle = f"RANKCHECK_TEST_TAG={tag}".encode()
    return [
        p
        for p in _live_pids()
        if p != me
        and (_has_env(p, needle) or (_parent_of(p) == me and not _is_multiprocessing_helper(p)))
    ]


def assert_no_leftovers(tag: str) -> None:
    deadline = time.monotonic() + 10  # SIGKILL is asynchronous; give the kernel a moment
    while leftovers(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert leftovers(tag) == []


@pytest.fixture()
def isolated_tmp(tmp_path, monkeypatch):
    """The verifier's temporary directory goes here, so the test can see it is removed."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return scratch


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


# ---- the seed scenario ----------------------------------------------------------------------------
def test_seed_scenario_names_the_missing_rank_and_the_call_site(tmp_path):
    write(tmp_path, "seed.py", SEED)
    proc = cli(["seed.py", "--no-static"], cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    announce = out.index("about to run `python seed.py` on 2 ranks")
    verdict = out.index(
        f"rank 0 entered all_reduce #2 at seed.py:{SEED_EXTRA_LINE}; "
        "rank 1 never entered it (finished after #1)"
    )
    assert announce < verdict  # it says what it runs before it runs it
    assert "[held] all_reduce f32[] SUM" in out  # the side-by-side sequences

    proc = cli(["seed.py", "--no-static", "--format", "json"], cwd=tmp_path)
    assert proc.returncode == 1
    result = json.loads(proc.stdout)["result"]
    divergence = result["divergence"]
    assert [c["rank"] for c in divergence["entered"]] == [0]
    assert divergence["entered"][0]["stack"][0]["line"] == SEED_EXTRA_LINE
    assert [a["rank"] for a in divergence["absent"]] == [1]
    ops = {r["rank"]: [c["op"] for c in r["calls"] if c["seq"]] for r in result["ranks"]}
    assert ops == {0: ["all_reduce", "all_reduce"], 1: ["all_reduce"]}


def test_static_finding_is_confirmed_in_the_cli(tmp_path):
    write(tmp_path, "seed.py", SEED)
    proc = cli(["seed.py"], cwd=tmp_path)
    assert proc.returncode == 1
    if "static analysis unavailable" in proc.stdout:
        pytest.skip("the static analyzer is not importable in this checkout")
    assert f"seed.py:{SEED_EXTRA_LINE}:" in proc.stdout
    assert "[confirmed]" in proc.stdout


# ---- verdicts -----------------------------------------------------------------------------------
def finding_at(path: Path, line: int, guard_line: int = 0) -> Finding:
    guard = None
    if guard_line:
        guard = Guard(Location(str(path), guard_line, 5), "if rank == 0:", "rank == 0")
    return Finding("RC101", "test finding", Location(str(path), line, 9), guard=guard)


def test_verdicts_confirmed_not_reproduced_not_reached_and_unpredicted(tmp_path):
    seed = write(tmp_path, "seed.py", SEED)
    judged = verify_findings(
        [finding_at(seed, SEED_EXTRA_LINE, SEED_GUARD_LINE)], announce=None, root=str(tmp_path)
    )
    assert [f.verdict for f in judged] == ["confirmed"]
    assert "rank 1 never entered it" in judged[0].verdict_detail

    # A claim on the first all_reduce (run by both ranks) is not the cause: the divergence that
    # was observed comes back as an extra, unpredicted finding at rank 0's call site.
    judged = verify_findings([finding_at(seed, SEED_FIRST_LINE)], announce=None)
    assert [f.verdict for f in judged] == ["not-reproduced", "unpredicted"]
    assert judged[1].location.line == SEED_EXTRA_LINE

    never = write(
        tmp_path,
        "never.py",
        """\
        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo")
        x = torch.ones(2)
        if dist.get_rank() == 7:
            dist.all_reduce(x)
        dist.all_reduce(x)
        dist.destroy_process_group()
        """,
    )
    judged = verify_findings([finding_at(never, 7)], announce=None)
    assert [f.verdict for f in judged] == ["not-reached"]


def test_user_error_gives_error_verdict_with_user_frames_only(tmp_path):
    script = write(
        tmp_path,
        "broken.py",
        """\
        import torch
        import torch.distributed as dist


        def load(rank):
            raise ValueError(f"bad shard for rank {rank}")


        dist.init_process_group("gloo")
        load(dist.get_rank())
        dist.barrier()
        dist.destroy_process_group()
        """,
    )
    judged = verify_findings([finding_at(script, 11)], announce=None)
    assert [f.verdict for f in judged] == ["error"]
    detail = judged[0].verdict_detail
    assert "rank 0:" in detail and "rank 1:" in detail
    assert 'broken.py", line 6, in load' in detail and "ValueError: bad shard" in detail
    assert "rank_main.py" not in detail and "runpy" not in detail and "torch/" not in detail


def test_deadlock_across_two_groups(tmp_path):
    script = write(
        tmp_path,
        "crossed.py",
        """\
        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo")
        pair = dist.new_group([0, 1])
        x = torch.ones(3)
        if dist.get_rank() == 0:
            dist.all_reduce(x, group=pair)
            dist.barrier()
        else:
            dist.barrier()
            dist.all_reduce(x, group=pair)
        dist.destroy_process_group()
        """,
    )
    result = run_script(script, announce=None)
    assert result.outcome == "diverged"
    assert result.divergence.kind == "deadlock"
    assert "was waiting in" in result.divergence.summary


def test_three_ranks_name_the_rank_that_left(tmp_path):
    script = write(
        tmp_path,
        "three.py",
        """\
        import torch
        import torch.distributed as dist


        def main():
            dist.init_process_group("gloo")
            x = torch.ones(2)
            dist.all_reduce(x)
            if dist.get_rank() == 2:
                return
            dist.barrier()
            dist.destroy_process_group()


        main()
        """,
    )
    result = run_script(script, nproc=3, announce=None)
    assert result.outcome == "diverged"
    assert [a.rank for a in result.divergence.absent] == [2]
    assert "rank 2 never entered it (finished after #1)" in result.divergence.summary


# ---- what gloo on CPU can stand in for, and what it cannot ------------------------------------------
def test_nccl_and_cuda_code_runs_on_gloo_cpu_and_says_so(tmp_path):
    script = write(
        tmp_path,
        "gpu_train.py",
        """\
        import os
        import torch
        import torch.distributed as dist

        local_rank = int(os.environ["LOCAL_RANK"])
        dist.init_process_group(backend="nccl")
        torch.cuda.set_device(local_rank)
        model = torch.nn.Linear(4, 4).cuda()
        x = torch.randn(2, 4, device="cuda")
        y = model(x).to(f"cuda:{local_rank}")
        dist.all_reduce(y)
        dist.destroy_process_group()
        """,
    )
    result = run_script(script, announce=None)
    assert result.outcome == "clean", [o.error for o in result.ranks]
    notes = " ".join(result.notes)
    assert '"gloo"' in notes and "cuda" in notes


def test_gpu_only_code_is_unsupported_not_guessed(tmp_path):
    script = write(
        tmp_path,
        "streams.py",
        """\
        import torch
        import torch.distributed as dist

        dist.init_process_group(backend="nccl")
        side = torch.cuda.Stream()
        x = torch.ones(2)
        if dist.get_rank() == 0:
            dist.all_reduce(x)
        dist.destroy_process_group()
        """,
    )
    judged = verify_findings([finding_at(script, 8)], announce=None)
    assert [f.verdict for f in judged] == ["unsupported"]
    assert "needs a GPU" in judged[0].verdict_detail


def test_ddp_backward_skipped_on_one_rank_is_caught_at_the_gradient_bucket(tmp_path):
    text = """\
        import torch
        import torch.distributed as dist
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("gloo")
        model = DDP(nn.Linear(8, 2))
        for step in range(2):
            loss = model(torch.randn(4, 8)).pow(2).mean()
            if dist.get_rank() == 0 or step == 0:
                loss.backward()
        dist.destroy_process_group()
        """
    hazard = write(tmp_path, "ddp_skip.py", text)
    judged = verify_findings([finding_at(hazard, 11)], announce=None)
    assert [f.verdict for f in judged] == ["confirmed"]
    detail = judged[0].verdict_detail
    assert "rank 0 entered all_reduce #3 at " in detail and "ddp_skip.py:11; rank 1 never" in detail
    fixed = write(tmp_path, "ddp_all.py", text.replace("dist.get_rank() == 0 or step == 0", "True"))
    result = run_script(fixed, announce=None)
    assert result.outcome == "clean"
    assert [c.op for c in result.ranks[0].calls if c.seq] == [
        "DistributedDataParallel",
        "all_reduce",
        "all_reduce",
    ]


# ---- function targets ------------------------------------------------------------------------------
def make_package(tmp_path: Path) -> None:
    write(tmp_path, "pkg/__init__.py", "")
    write(
        tmp_path,
        "pkg/metrics.py",
        """\
        import torch
        import torch.distributed as dist


        def sync_metrics(values):
            if dist.get_rank() == 0:
                dist.all_reduce(values)
            return values


        def sync_everywhere():
            values = torch.ones(2)
            dist.all_reduce(values)
            return values


        def report_on_main():
            values = torch.ones(2)
            if dist.get_rank() == 0:
                dist.all_reduce(values)
        """,
    )
    write(
        tmp_path,
        "fixtures.py",
        """\
        import torch


        def metric_values():
            return (torch.ones(3),)
        """,
    )


def test_function_target_with_a_fixture(tmp_path):
    make_package(tmp_path)
    proc = cli(
        ["pkg/metrics.py::sync_metrics", "--fixture", "fixtures:metric_values", "--no-static"],
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "about to call pkg/metrics.py::sync_metrics()" in proc.stdout
    assert "rank 0 entered all_reduce #1 at pkg/metrics.py:7" in proc.stdout
    proc = cli(["pkg/metrics.py::sync_everywhere", "--no-static"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no divergence" in proc.stdout


def test_findings_in_library_modules_are_replayed_through_their_function(tmp_path):
    make_package(tmp_path)
    module = tmp_path / "pkg" / "metrics.py"
    judged = verify_findings(
        [finding_at(module, 20), finding_at(module, 7)], announce=None, root=str(tmp_path)
    )
    assert judged[0].verdict == "confirmed"  # report_on_main() takes no arguments: replayed
    assert judged[1].verdict == "unsupported"  # sync_metrics(values) needs a fixture
    assert "--fixture" in judged[1].verdict_detail


def test_run_function_api(tmp_path):
    make_package(tmp_path)
    result = run_function(
        str(tmp_path / "pkg" / "metrics.py"),
        "sync_metrics",
        fixture="fixtures:metric_values",
        cwd=str(tmp_path),
        announce=None,
    )
    assert result.outcome == "diverged"


# ---- bounded and clean --------------------------------------------------------------------------------
HANG_WITH_GRANDCHILD = """\
import subprocess
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
x = torch.ones(2)
dist.all_reduce(x)
if dist.get_rank() == 0:
    dist.all_reduce(x)
else:
    dist.barrier()
dist.destroy_process_group()
"""

CRASH = """\
import os
import signal

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
x = torch.ones(2)
dist.all_reduce(x)
if dist.get_rank() == 1:
    os.kill(os.getpid(), signal.SIGKILL)
dist.all_reduce(x)
dist.destroy_process_group()
"""

STUCK = """\
import pathlib
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
dist.barrier()
if dist.get_rank() == 1:
    pathlib.Path(sys.argv[1]).write_text("sleeping")
    time.sleep(600)
dist.barrier()
dist.destroy_process_group()
"""


def test_cleanup_after_a_confirmed_hang(tmp_path, isolated_tmp):
    script = write(tmp_path, "hang.py", HANG_WITH_GRANDCHILD)
    tag = uuid.uuid4().hex
    before = open_fds()
    result = run_script(script, env=[("RANKCHECK_TEST_TAG", tag)], announce=None)
    assert result.outcome == "diverged"
    assert "rank 1 entered barrier #2" in result.divergence.summary
    assert_no_leftovers(tag)  # the ranks and the helper each of them started
    assert list(isolated_tmp.iterdir()) == []
    assert open_fds() == before


def test_cleanup_after_a_crash(tmp_path, isolated_tmp):
    script = write(tmp_path, "crash.py", CRASH)
    tag = uuid.uuid4().hex
    before = open_fds()
    result = run_script(script, env=[("RANKCHECK_TEST_TAG", tag)], announce=None)
    assert result.outcome == "diverged"
    assert "rank 1 never entered it (died (exit code -9) after #1)" in result.divergence.summary
    assert_no_leftovers(tag)
    assert list(isolated_tmp.iterdir()) == []
    assert open_fds() == before


def test_cleanup_after_the_time_limit(tmp_path, isolated_tmp):
    script = write(tmp_path, "stuck.py", STUCK)
    tag = uuid.uuid4().hex
    before = open_fds()
    result = run_script(
        script,
        [str(tmp_path / "marker")],
        timeout=15.0,
        env=[("RANKCHECK_TEST_TAG", tag)],
        announce=None,
    )
    assert result.outcome == "timeout"
    sleeper = result.ranks[1]
    assert sleeper.stack and sleeper.stack[0].line == 12  # where it was: time.sleep(600)
    assert result.ranks[0].blocked is not None and result.ranks[0].blocked.op == "barrier"
    assert_no_leftovers(tag)
    assert list(isolated_tmp.iterdir()) == []
    assert open_fds() == before


def _default_sigint() -> None:  # runs in the child between fork and exec
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_stops_every_rank(tmp_path):
    write(tmp_path, "stuck.py", STUCK)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    marker = tmp_path / "marker"
    tag = uuid.uuid4().hex
    env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(scratch), RANKCHECK_TEST_TAG=tag)
    proc = subprocess.Popen(
        [PYTHON, "-m", "rankcheck.verify.cli", "stuck.py", "--no-static", "--", str(marker)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As from a terminal: a test run started in the background (`pytest &`) ignores SIGINT, and
        # a child inherits that, so the Ctrl-C below would never arrive.
        preexec_fn=_default_sigint,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert marker.exists(), "the ranks never started"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, out + err
    assert "interrupted" in err
    assert_no_leftovers(tag)
    assert list(scratch.iterdir()) == []


# ---- usage and installation -----------------------------------------------------------------------
def test_missing_torch_prints_the_install_hint(tmp_path):
    write(tmp_path, "seed.py", SEED)
    code = (
        "import sys; sys.modules['torch'] = None; "
        "from rankcheck.verify.cli import main; sys.exit(main(['seed.py']))"
    )
    proc = subprocess.run(
        [PYTHON, "-c", code],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in proc.stderr


def test_torch_that_fails_to_import_in_the_ranks_prints_the_install_hint(tmp_path):
    write(tmp_path, "seed.py", SEED)
    write(tmp_path, "hide/torch/__init__.py", 'raise ImportError("No module named torch")\n')
    proc = cli(
        ["seed.py", "--no-static"],
        cwd=tmp_path,
        env={"PYTHONPATH": os.pathsep.join([str(tmp_path / "hide"), str(REPO)])},
    )

    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in proc.stderr


def test_usage_errors_exit_2(tmp_path):
    write(tmp_path, "seed.py", SEED)
    assert cli(["missing.py"], cwd=tmp_path).returncode == 2
    assert cli(["seed.py", "--fixture", "x:y"], cwd=tmp_path).returncode == 2
    assert cli(["seed.py", "--nproc", "1"], cwd=tmp_path).returncode == 2
    assert cli(["seed.py", "--bogus"], cwd=tmp_path).returncode == 2
