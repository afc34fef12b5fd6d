"""The run-time guard on REAL jobs: `rankcheck run -- torchrun ...` on loopback gloo ranks.

Each test runs tests/runtime_scenarios/job.py with one kind of trouble and checks the verdict
the guard wrote into its bundle: the cause, the rank, the line (the `# rt:` marker). Each also
records the time from the trouble to the verdict (goal: under 10 s; the tests use a 2 s floor).
Nothing is left running: every test waits for the launcher and checks the ranks' pids are gone.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("torch.distributed")

pytestmark = [pytest.mark.slow, pytest.mark.runtime]

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "runtime_scenarios", "job.py")
VERDICT_WAIT_S = 60.0
TIMES: dict = {}


def marker_line(name: str) -> int:
    with open(JOB, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.rstrip().endswith(f"# rt: {name}"):
                return number
    raise AssertionError(name)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def torchrun(nproc: int, *rendezvous: str) -> list:
    return [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc),
            "--monitor-interval", "0.1", *(rendezvous or ("--standalone",)), JOB]


def start(tmp_path, scenario: str, command: list, *guard_args: str, armed_in_script=False) -> subprocess.Popen:
    env = dict(os.environ, RUNTIME_SCENARIO=scenario, RUNTIME_OUT=str(tmp_path))
    if armed_in_script:
        env["RUNTIME_ARM_DIR"] = str(tmp_path / "hangs")
    else:
        command = [sys.executable, "-m", "rankcheck", "run", "--dump-dir", str(tmp_path / "hangs"),
                   "--floor-s", "2", "--interval-s", "0.25", *guard_args, "--", *command]
    return subprocess.Popen(
        command, env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)


def wait_verdict(tmp_path, procs) -> dict:
    deadline = time.time() + VERDICT_WAIT_S
    while time.time() < deadline:
        found = sorted(glob.glob(str(tmp_path / "hangs" / "*" / "verdict.json")))
        if found:
            time.sleep(0.2)
            with open(found[0], encoding="utf-8") as handle:
                verdict = json.load(handle)
            verdict["written_at"] = os.path.getmtime(found[0])
            verdict["bundle"] = os.path.dirname(found[0])
            return verdict
        if all(p.poll() is not None for p in procs):
            time.sleep(0.5)
            if not glob.glob(str(tmp_path / "hangs" / "*" / "verdict.json")):
                break
        time.sleep(0.1)
    output = "".join(stop(p) for p in procs)
    raise AssertionError(f"no verdict in {VERDICT_WAIT_S} s:\n{output[-4000:]}")


def stop(proc: subprocess.Popen) -> str:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # rankcheck run forwards it to the launcher's group
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.stdout.read() if proc.stdout and not proc.stdout.closed else ""


def rank_pids(tmp_path) -> list:
    pids = []
    for path in glob.glob(str(tmp_path / "hangs" / ".live" / "*" / "rank-*.json")):
        with open(path, encoding="utf-8") as handle:
            pids.append(json.load(handle)["pid"])
    return pids


def assert_all_gone(tmp_path) -> None:
    deadline = time.time() + 10
    from rankcheck.runtime.launch import process_gone

    while time.time() < deadline and not all(process_gone(p) for p in rank_pids(tmp_path)):
        time.sleep(0.1)
    assert all(process_gone(p) for p in rank_pids(tmp_path))


def trouble_to_verdict(tmp_path, verdict: dict) -> float:
    started = []
    for path in glob.glob(str(tmp_path / "trouble_*")):
        with open(path, encoding="utf-8") as handle:
            started.append(float(handle.read()))
    assert started, "the scenario never reached its trouble"
    return verdict["written_at"] - min(started)


def run_scenario(tmp_path, scenario: str, command=None, *guard_args: str) -> dict:
    return watch(tmp_path, scenario, [start(tmp_path, scenario, command or torchrun(2), *guard_args)])


def watch(tmp_path, scenario: str, procs: list) -> dict:
    """The verdict of the job the processes run; stops them, checks nothing is left, times it."""
    try:
        verdict = wait_verdict(tmp_path, procs)
    finally:
        for proc in procs:
            stop(proc)
    assert_all_gone(tmp_path)
    elapsed = trouble_to_verdict(tmp_path, verdict)
    TIMES[scenario] = elapsed
    print(f"\n{scenario}: trouble to verdict {elapsed:.1f} s\n{verdict['text']}")
    assert elapsed < 10.0, verdict["text"]
    return verdict


def line_of(site: str) -> tuple:
    path, _, line = site.rpartition(":")
    return os.path.basename(path), int(line)


def test_extra_all_reduce_on_rank_0_is_a_code_divergence_at_its_line(tmp_path):
    verdict = run_scenario(tmp_path, "extra")
    assert verdict["cause"] == "different"
    assert verdict["ranks"] == [0]
    assert line_of(verdict["site"]) == ("job.py", marker_line("extra"))
    assert verdict["collective"]["op"] == "all_reduce"
    assert "RC1" in verdict["static"]  # the static finding on that line is linked
    assert verdict["flight_recorder"]["kind"] == "mismatch"
    # the bundle's files are the user's alone
    for path in glob.glob(verdict["bundle"] + "/**", recursive=True):
        mode = os.stat(path).st_mode & 0o777
        assert mode == (0o700 if os.path.isdir(path) else 0o600), path


def test_rank_sleeping_in_its_data_loader_is_stuck_outside_a_collective(tmp_path):
    verdict = run_scenario(tmp_path, "loader")
    assert verdict["cause"] == "outside"
    assert verdict["ranks"] == [1]
    assert line_of(verdict["site"]) == ("job.py", marker_line("loader"))
    assert verdict["collective"]["op"] == "all_reduce"
    # and `rankcheck fr BUNDLE` reads the bundle again to the same verdict
    again = subprocess.run([sys.executable, "-m", "rankcheck", "fr", verdict["bundle"], "--format", "json"],
                           capture_output=True, text=True, timeout=60, check=False)
    assert again.returncode == 1, again.stderr
    assert json.loads(again.stdout)["cause"] == "outside"
    # `rankcheck stacks` on the same bundle names rank 1 as the odd one out
    stacks = subprocess.run([sys.executable, "-m", "rankcheck", "stacks", verdict["bundle"], "--json"],
                            capture_output=True, text=True, timeout=60, check=False)
    report = json.loads(stacks.stdout)
    assert [g["ranks"] for g in report["odd"]] == [[1]] and not report["odd"][0]["in_collective"]
    if shutil.which("py-spy"):  # its native stacks, when installed, tell the same
        spy = [os.path.join(verdict["bundle"], f"rank-{r}", "py-spy.txt") for r in (0, 1)]
        stacks = subprocess.run([sys.executable, "-m", "rankcheck", "stacks", *spy, "--json"],
                                capture_output=True, text=True, timeout=60, check=False)
        assert [g["ranks"] for g in json.loads(stacks.stdout)["odd"]] == [[1]], stacks.stderr


def test_ddp_gradients_unseen_by_the_wrappers_still_show_the_rank_stuck_outside(tmp_path):
    # DDP all-reduces from C++: only the flight recorder's counters show rank 0 waiting
    verdict = run_scenario(tmp_path, "ddp")
    assert verdict["cause"] == "outside", verdict["text"]
    assert verdict["ranks"] == [1]
    assert line_of(verdict["site"]) == ("job.py", marker_line("loader"))


def test_a_rank_killed_with_sigkill_is_named_crashed_with_its_signal(tmp_path):
    verdict = run_scenario(tmp_path, "kill")
    assert verdict["cause"] == "crashed"
    assert verdict["ranks"] == [1]
    assert "SIGKILL" in verdict["text"]


def test_every_rank_blocked_on_the_host_after_the_same_collective(tmp_path):
    verdict = run_scenario(tmp_path, "host")
    assert verdict["cause"] == "host"
    assert sorted(verdict["ranks"]) == [0, 1]
    assert f"job.py:{marker_line('host')}" in verdict["text"]
    assert verdict["flight_recorder"]["kind"] == "idle"


def test_one_rank_ten_times_slower_is_a_straggler(tmp_path):
    verdict = run_scenario(tmp_path, "straggler")
    assert verdict["cause"] == "straggler"
    assert verdict["ranks"] == [1]
    compute = verdict["detection"]["compute_s"]
    assert compute["1"] > 5 * compute["0"]


def test_four_ranks_armed_by_the_scripts_own_line_one_stuck_in_its_loader(tmp_path):
    # plain torchrun, no `rankcheck run`: the script calls rankcheck.runtime.arm() itself
    verdict = watch(tmp_path, "loader, 4 ranks", [start(tmp_path, "loader", torchrun(4), armed_in_script=True)])
    assert verdict["cause"] == "outside"
    assert verdict["ranks"] == [1]
    assert "ranks 0, 2, 3 are waiting in" in verdict["text"]


def test_two_nodes_on_loopback_share_one_bundle(tmp_path):
    port = free_port()
    procs = []
    for node in (0, 1):
        command = torchrun(1, "--nnodes", "2", "--node-rank", str(node), "--rdzv-backend", "c10d",
                           "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "twonode")
        procs.append(start(tmp_path, "loader", command))
    verdict = watch(tmp_path, "two nodes", procs)
    assert verdict["cause"] == "outside" and verdict["ranks"] == [1]
    assert {"job.json", "rank-0", "rank-1"} <= set(os.listdir(verdict["bundle"]))


def test_rankcheck_dump_collects_evidence_from_a_running_job_on_request(tmp_path):
    # a floor far beyond the test: only the request makes a bundle
    proc = start(tmp_path, "loader", torchrun(2), "--floor-s", "300")
    try:
        deadline = time.time() + VERDICT_WAIT_S
        while time.time() < deadline and not glob.glob(str(tmp_path / "trouble_*")):
            time.sleep(0.1)
        time.sleep(1.0)
        dump = subprocess.run([sys.executable, "-m", "rankcheck", "dump", "--dump-dir", str(tmp_path / "hangs")],
                              capture_output=True, text=True, timeout=60, check=False)
    finally:
        stop(proc)
    assert_all_gone(tmp_path)
    assert dump.returncode == 1, dump.stderr
    assert "evidence collected (dump)" in dump.stdout
    assert f"job.py:{marker_line('loader')} load_batch" in dump.stdout.split("rank 1 is in: ")[1]
    bundle = glob.glob(str(tmp_path / "hangs" / "*" / "verdict.json"))[0]
    for rank in (0, 1):
        folder = os.path.join(os.path.dirname(bundle), f"rank-{rank}")
        assert {f"fr_trace_rank_{rank}", "stacks.txt", "stacks.json", "heartbeat.jsonl", "env.json"} <= set(os.listdir(folder))


def test_consistency_mode_stops_both_ranks_before_the_mismatched_collective(tmp_path):
    proc = start(tmp_path, "extra", torchrun(2), "--check", "--floor-s", "300")
    try:
        output, _ = proc.communicate(timeout=90)
    finally:
        stop(proc)
    assert_all_gone(tmp_path)
    assert proc.returncode != 0
    assert "collective mismatch" in output
    assert f"job.py:{marker_line('extra')}" in output and f"job.py:{marker_line('barrier')}" in output
