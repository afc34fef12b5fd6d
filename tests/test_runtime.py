"""The run-time guard's torch-free parts: detection from heartbeats, stack dumps of every kind
`rankcheck stacks` reads (as a subprocess), settings, and that importing it needs no torch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from rankcheck.runtime.detect import HANG, STRAGGLER, detect
from rankcheck.runtime.settings import Settings, from_env

NOW = 1000.0
SETTINGS = Settings(floor_s=2.0, factor=10.0, interval_s=0.25)


def beat(rank, *, progress=NOW - 0.1, published=NOW, inside=None, steps=(), state="running", collectives=5):
    return {"rank": rank, "last_progress": progress, "published": published, "in_collective": inside,
            "step_times": [list(s) for s in steps], "gaps": [], "state": state, "collectives": collectives,
            "groups": {}}


def test_no_progress_past_the_floor_is_a_hang_and_before_it_is_not():
    beats = {0: beat(0, progress=NOW - 3, inside="world"), 1: beat(1, progress=NOW - 3)}
    assert detect(beats, NOW, SETTINGS).kind == HANG
    beats = {0: beat(0, progress=NOW - 1.5, inside="world"), 1: beat(1, progress=NOW - 1.5)}
    assert detect(beats, NOW, SETTINGS) is None


def test_the_threshold_grows_with_the_median_step():
    slow_steps = [(0.5, 0.1)] * 5  # factor 10 x 0.5 s = 5 s > the 2 s floor
    beats = {r: beat(r, progress=NOW - 3, steps=slow_steps) for r in (0, 1)}
    assert detect(beats, NOW, SETTINGS) is None
    assert detect(beats, NOW + 2.5, Settings(floor_s=2.0, interval_s=100)).kind == HANG


def test_start_up_before_any_collective_is_not_a_hang():
    beats = {r: beat(r, progress=NOW - 30, collectives=0) for r in (0, 1)}
    assert detect(beats, NOW, SETTINGS) is None


def test_a_stale_heartbeat_while_the_others_wait_is_a_rank_gone():
    beats = {0: beat(0, progress=NOW - 2.5, inside="world"), 1: beat(1, published=NOW - 5)}
    found = detect(beats, NOW, Settings(floor_s=60.0, interval_s=0.25))  # no need to wait for the floor
    assert found.kind == HANG and found.gone == (1,)
    # a late heartbeat from a process this host still runs is a lagging rank, not a gone one
    late_but_alive = detect(beats, NOW, Settings(floor_s=60.0, interval_s=0.25), still_running=lambda b: True)
    assert late_but_alive is None


def test_one_rank_computing_ten_times_longer_is_a_straggler():
    fast, slow = [(0.5, 0.45)] * 4, [(0.5, 0.0)] * 4
    found = detect({0: beat(0, steps=fast), 1: beat(1, steps=slow), 2: beat(2, steps=fast)}, NOW, SETTINGS)
    assert found.kind == STRAGGLER and found.slow_rank == 1
    even = [(0.5, 0.25)] * 4
    assert detect({0: beat(0, steps=even), 1: beat(1, steps=even)}, NOW, SETTINGS) is None


def test_settings_from_the_environment_and_bad_values():
    assert from_env({"RANKCHECK_FLOOR_S": "7", "RANKCHECK_CHECK": "1"}).floor_s == 7.0
    with pytest.raises(ValueError, match="RANKCHECK_FLOOR_S"):
        from_env({"RANKCHECK_FLOOR_S": "soon"})
    with pytest.raises(TypeError, match="unknown option"):
        from_env({}, flor_s=1.0)


FAULTHANDLER = """Thread 0x00007f01 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait
  File "/job/helper.py", line 5 in worker

Current thread 0x00007f00 (most recent call first):
  File "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2050 in all_reduce
  File "/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 83 in wrapper
  File "/job/train.py", line 88 in train
  File "/job/train.py", line 120 in <module>
"""
PY_SPY_STUCK = """Process 4242: python train.py
Python v3.11.7 (/usr/bin/python3.11)

Thread 4242 (idle): "MainThread"
    __next__ (/job/data.py:41)
    train (/job/train.py:80)
    <module> (/job/train.py:120)
Thread 4250 (idle): "Thread-1"
    wait (/usr/lib/python3.11/threading.py:320)
"""


def py_spy_json(frames):
    return json.dumps([{"pid": 1, "thread_id": 1, "thread_name": "MainThread", "owns_gil": False,
                        "active": True, "frames": [{"name": name, "filename": path, "line": line}
                                                      for path, line, name in frames]}])


def run_stacks(*args):
    return subprocess.run([sys.executable, "-m", "rankcheck", "stacks", *args], capture_output=True,
                          text=True, timeout=60, check=False)


@pytest.mark.slow
def test_stacks_names_the_rank_outside_the_collective_from_mixed_dumps(tmp_path):
    (tmp_path / "stacks_rank_0.txt").write_text(FAULTHANDLER)
    (tmp_path / "stacks_rank_1.txt").write_text(PY_SPY_STUCK)
    (tmp_path / "stacks_rank_2.json").write_text(py_spy_json([
        ("/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", 2050, "all_reduce"),
        ("/job/train.py", 88, "train"), ("/job/train.py", 120, "<module>")]))
    proc = run_stacks(str(tmp_path), "--json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["groups"][0]["ranks"] == [0, 2] and report["groups"][0]["in_collective"]
    assert [g["ranks"] for g in report["odd"]] == [[1]]
    ours, theirs = report["parting"]["1"]
    assert ours == ["/job/train.py", 88, "train"] and theirs == ["/job/train.py", 80, "train"]
    text = run_stacks(str(tmp_path)).stdout
    assert "odd one out: rank 1" in text and "the odd one is somewhere else" in text


@pytest.mark.slow
def test_stacks_reads_the_debug_servers_one_file_and_reports_bad_files(tmp_path):
    server = "\n".join(f"=== Rank {r}: 127.0.0.1:{9000 + r} ===\n{FAULTHANDLER}" for r in range(3))
    (tmp_path / "stacks").write_text(server.replace('line 88 in train', 'line 99 in train', 1))
    (tmp_path / "junk_rank_9.txt").write_text("not a stack\n")
    proc = run_stacks(str(tmp_path / "stacks"), str(tmp_path / "junk_rank_9.txt"), "--json")
    assert proc.returncode == 2
    assert "junk_rank_9.txt: neither a faulthandler traceback nor a py-spy dump" in proc.stderr
    report = json.loads(proc.stdout)  # the readable file is still reported
    assert [g["ranks"] for g in report["odd"]] == [[0]]


@pytest.mark.slow
def test_the_runtime_package_and_its_commands_import_without_torch():
    code = ("import sys; sys.modules['torch'] = None\n"
            "import rankcheck.runtime, rankcheck.runtime.cli, rankcheck.runtime.launch, rankcheck.runtime.stacks\n"
            "import rankcheck.fr.bundle, rankcheck.runtime.autoarm\n"
            "from rankcheck.cli import main; raise SystemExit(main(['stacks', '--help']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
def test_run_without_a_command_and_dump_without_a_job_are_usage_errors(tmp_path):
    run = subprocess.run([sys.executable, "-m", "rankcheck", "run", "--dump-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 2 and "give the launcher command" in run.stderr
    dump = subprocess.run([sys.executable, "-m", "rankcheck", "dump", "--dump-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert dump.returncode == 2 and "no armed job" in dump.stderr
    assert not os.listdir(tmp_path)
    (tmp_path / "a-file").write_text("")
    bad = subprocess.run([sys.executable, "-m", "rankcheck", "run", "--dump-dir", str(tmp_path / "a-file" / "d"),
                          "--", sys.executable, "-c", "pass"], capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2 and "cannot write there" in bad.stderr


def test_launchers_of_every_node_probe_one_shared_dump_dir_at_once(tmp_path):
    # Each node's `rankcheck run` checks the shared directory is writable at the same moment;
    # one's clean-up must never remove the probe another is about to remove.
    code = ("import sys\nfrom rankcheck.runtime.bundle import probe_writable\n"
            "for _ in range(300):\n    probe_writable(sys.argv[1])\n")
    shared = str(tmp_path / "hangs")
    procs = [subprocess.Popen([sys.executable, "-c", code, shared], stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    assert os.listdir(shared) == []


def write_bundle(folder, beats, trigger="hang", exits=None):
    folder.mkdir()
    (folder / "job.json").write_text(json.dumps({
        "world_size": len(beats), "trigger": trigger, "source_root": str(folder),
        "detection": {"kind": trigger, "stalled_s": 6.2, "typical_s": 0.4, "gone": []}}))
    (folder / "heartbeats.json").write_text(json.dumps({str(r): b for r, b in beats.items()}))
    if exits:
        (folder / "launcher.json").write_text(json.dumps({"ranks": exits}))
    return folder


def in_all_reduce(rank, seq=7, state="running", published=NOW):
    record = {"name": "WORLD", "seq": seq, "op": "all_reduce", "sites": [["/job/train.py", 88, "train"]],
              "entered": NOW - 7, "returned": None}
    return {**beat(rank, inside="world", state=state, published=published), "groups": {"world": record}}


@pytest.mark.slow
def test_a_bundle_with_every_rank_in_the_same_collective_is_not_the_code(tmp_path):
    bundle = write_bundle(tmp_path / "b", {r: in_all_reduce(r) for r in range(4)})
    proc = subprocess.run([sys.executable, "-m", "rankcheck", "fr", str(bundle), "--format", "json"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 1, proc.stderr
    verdict = json.loads(proc.stdout)
    assert verdict["cause"] == "same" and verdict["ranks"] == [0, 1, 2, 3]
    assert verdict["collective"] == {"group": "WORLD", "group_key": "world", "seq": 7, "op": "all_reduce"}
    assert "hang detected 6.2 s after the last progress (median step 0.40 s)" in verdict["text"]
    assert (bundle / "verdict.txt").read_text() == verdict["text"]  # written back into the bundle


def returned_from_all_reduce(rank, seq, flight):
    record = {"name": "WORLD", "seq": seq, "op": "all_reduce", "sites": [["/job/train.py", 88, "train"]],
              "entered": NOW - 7.1, "returned": NOW - 7}
    return {**beat(rank), "groups": {"world": record}, "flight": flight}


@pytest.mark.parametrize(("wrapped_seq", "cause", "ranks"), [
    (50, "outside", [1]),  # the recorder has not yet marked the returned #50 completed
    (0, "different", [1]),  # #50 never passed the wrappers (DDP's buckets): rank 1 waits in it
])
def test_a_collective_the_recorder_shows_pending_counts_only_if_it_never_returned(tmp_path, wrapped_seq, cause, ranks):
    from rankcheck.fr.bundle import analyze_bundle

    rank_1 = returned_from_all_reduce(1, wrapped_seq, {"0": [50, 49]})
    if not wrapped_seq:
        rank_1["groups"] = {}
    bundle = write_bundle(tmp_path / "b", {0: in_all_reduce(0, seq=51), 1: rank_1})
    verdict = analyze_bundle(str(bundle))
    assert (verdict.cause, list(verdict.ranks)) == (cause, ranks), verdict.text


def test_the_bundle_reader_keys_the_world_group_as_the_wrappers_do():
    pytest.importorskip("torch.distributed")
    from rankcheck.fr.bundle import WORLD_GROUP_KEY
    from rankcheck.verify.instrument import WORLD_KEY

    assert WORLD_GROUP_KEY == WORLD_KEY


@pytest.mark.slow
def test_a_bundle_names_the_killed_rank_not_the_ones_the_launcher_stopped(tmp_path):
    beats = {0: in_all_reduce(0), 1: {**in_all_reduce(1), "in_collective": None}, 2: in_all_reduce(2)}
    exits = {"0": {"exitcode": -15}, "1": {"exitcode": -9}, "2": {"exitcode": -15}}
    bundle = write_bundle(tmp_path / "b", beats, trigger="crash", exits=exits)
    (bundle / "heartbeats.json").write_text("{not json")  # a damaged file: the rest still counts
    proc = subprocess.run([sys.executable, "-m", "rankcheck", "fr", str(bundle)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 1, proc.stderr
    assert "cause: a rank crashed or exited" in proc.stdout
    (bundle / "heartbeats.json").write_text(json.dumps({str(r): b for r, b in beats.items()}))
    proc = subprocess.run([sys.executable, "-m", "rankcheck", "fr", str(bundle), "--format", "json"],
                          capture_output=True, text=True, timeout=60, check=False)
    verdict = json.loads(proc.stdout)
    assert verdict["cause"] == "crashed" and verdict["ranks"] == [1]
    assert "rank 1 killed by SIGKILL (exit code -9)" in verdict["text"]
    assert "rank 0 was stopped by the launcher afterwards" in verdict["text"]


@pytest.mark.slow
def test_the_same_collective_with_different_shapes_in_the_recorder_is_a_code_divergence(tmp_path):
    # heartbeats alone: every rank inside all_reduce #2; the recorded dumps: rank 1 passed another shape
    recorded = os.path.join(os.path.dirname(__file__), "data", "fr", "recorded-torch2.13",
                            "shape_mismatch-4-on-demand", "pickle")
    bundle = write_bundle(tmp_path / "b", {r: in_all_reduce(r, seq=2) for r in range(4)})
    for rank in range(4):
        (bundle / f"rank-{rank}").mkdir()
        shutil.copy(os.path.join(recorded, f"fr_trace_rank_{rank}.pkl"), bundle / f"rank-{rank}" / f"fr_trace_rank_{rank}")
    proc = subprocess.run([sys.executable, "-m", "rankcheck", "fr", str(bundle), "--format", "json"],
                          capture_output=True, text=True, timeout=60, check=False)
    verdict = json.loads(proc.stdout)
    assert verdict["cause"] == "different", verdict["text"]
    assert verdict["flight_recorder"]["mismatch"]["field"] == "shape"
    odd = verdict["flight_recorder"]["mismatch"]["variants"][-1]["ranks"]
    assert verdict["ranks"] == odd and len(odd) == 1
