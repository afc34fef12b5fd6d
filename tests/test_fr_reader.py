"""Reading dumps: every known layout, recorded and built-from-layout; clear errors for the rest.

Each test runs `rankcheck fr` as a subprocess (the way a user does) unless it checks a pure
function of the reader.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "fr")
BUILT = os.path.join(DATA, "built-from-layout")
RECORDED = os.path.join(DATA, "recorded-torch2.13")
SCENARIOS = os.path.join(HERE, "fr_scenarios")
sys.path.insert(0, SCENARIOS)

from launch import expected_line  # noqa: E402 - after the path insert

BUILT_VERSIONS = ("2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9")


def run_fr(*args, python_prelude=""):
    code = (
        f"import sys\n{python_prelude}\n"
        "from rankcheck.fr.cli import main\n"
        "status = main(sys.argv[1:])\n"
        "sys.stderr.write('\\ntorch imported: %s\\n' % ('torch' in sys.modules and "
        "sys.modules['torch'] is not None))\n"
        "sys.exit(status)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args], check=False, capture_output=True, text=True,
        timeout=60,
        cwd=os.path.dirname(HERE),
    )


def fr_json(*args):
    proc = run_fr(*args, "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def built_formats():
    for version in BUILT_VERSIONS:
        for fmt in sorted(os.listdir(os.path.join(BUILT, f"v{version}"))):
            yield version, fmt


@pytest.mark.parametrize("version,fmt", list(built_formats()))
def test_every_built_layout_reads_to_the_same_verdict(version, fmt):
    code, doc = fr_json(os.path.join(BUILT, f"v{version}", fmt))
    assert code == 1
    assert {d["dump_version"] for d in doc["dumps"]} == {version}
    assert {d["format"] for d in doc["dumps"]} == {fmt}
    verdict = doc["verdict"]
    assert verdict["kind"] == "behind" and verdict["behind_ranks"] == [1]
    assert verdict["ahead_ranks"] == [0, 2]
    assert (verdict["seq"], verdict["op"]) == (3, "broadcast")
    if fmt == "pickle":
        assert verdict["frame"] == {"path": "/workspace/train.py", "line": 42,
                                    "function": "train_step"}
        [last] = verdict["behind_last"]
        assert last["entry"]["frame"]["line"] == 37
    else:
        assert verdict["frame"] is None
    states = {s["rank"]: s for s in doc["groups"][0]["rank_states"]}
    assert states[1]["last_enqueued"] == 2 and states[1]["last_completed"] == 2
    assert states[0]["last_enqueued"] == 3 and states[0]["last_completed"] == 2
    # send/recv are point-to-point, not collectives: they never count as a divergence
    assert all(p["op"] != "send" for s in states.values() for p in s["pending"])


def test_dump_version_2_2_has_no_pg_status_and_still_gets_counters():
    from rankcheck.fr.reader import read_dump

    dump = read_dump(os.path.join(BUILT, "v2.2", "pickle", "nccl_trace_rank_0"))
    assert dump.version == "2.2" and dump.status == {}
    assert dump.rank == 0 and dump.has_stacks
    _, doc = fr_json(os.path.join(BUILT, "v2.2", "pickle"))
    assert doc["groups"][0]["rank_states"][0]["last_started"] == 3  # from the entry states


RECORDED_CASES = {
    # recorded dir: (exit code, kind, named ranks key, ranks, seq, op, script, marker)
    "extra_allreduce-2-on-demand/pickle": (1, "split", "ahead_ranks", [0], 3, "all_reduce",
                                           "extra_allreduce.py", "divergent"),
    "shape_mismatch-4-on-demand/pickle": (1, "mismatch", "entry_rank", 3, 2, "all_reduce",
                                          "shape_mismatch.py", "divergent"),
    "crash_before_dump-4-on-demand/pickle": (1, "missing", "missing_ranks", [3], 2, "all_reduce",
                                             "crash_before_dump.py", "divergent"),
    "host_stall-2-on-demand/pickle": (0, "idle", "missing_ranks", [], 2, "barrier",
                                      "host_stall.py", "last"),
    "sleep_before_barrier-2-on-timeout/timeout": (1, "split", "behind_ranks", [1], 2, "barrier",
                                                  "sleep_before_barrier.py", "divergent"),
}


@pytest.mark.parametrize("folder", sorted(RECORDED_CASES))
def test_recorded_torch_2_13_dumps(folder):
    exit_code, kind, key, ranks, seq, op, script, marker = RECORDED_CASES[folder]
    code, doc = fr_json(os.path.join(RECORDED, folder))
    verdict = doc["verdict"]
    assert code == exit_code
    assert {d["dump_version"] for d in doc["dumps"]} == {"2.10"}
    assert verdict["kind"] == kind and verdict[key] == ranks
    assert (verdict["seq"], verdict["op"]) == (seq, op)
    assert os.path.basename(verdict["frame"]["path"]) == script
    assert verdict["frame"]["line"] == expected_line(script, marker)


def test_recorded_json_dumps_read_the_same_without_frames():
    code, doc = fr_json(os.path.join(RECORDED, "shape_mismatch-4-on-demand", "json"))
    verdict = doc["verdict"]
    assert code == 1 and verdict["kind"] == "mismatch" and verdict["entry_rank"] == 3
    assert verdict["frame"] is None


def test_reading_never_imports_torch():
    # torch made unimportable: reading pickle and JSON dumps must not need it
    prelude = "sys.modules['torch'] = None"
    for folder in ("extra_allreduce-2-on-demand/pickle", "extra_allreduce-2-on-demand/json"):
        proc = run_fr(os.path.join(RECORDED, folder), python_prelude=prelude)
        assert proc.returncode == 1, proc.stderr
        assert "rank 0" in proc.stdout
    proc = run_fr(os.path.join(RECORDED, "host_stall-2-on-demand/pickle"))
    assert proc.returncode == 0 and "torch imported: False" in proc.stderr


def _copy_dump(tmp_path, mutate, name="fr_trace_rank_0"):
    source = os.path.join(BUILT, "v2.7", "json", "nccl_trace_rank_0.json")
    with open(source, encoding="utf-8") as handle:
        raw = json.load(handle)
    mutate(raw)
    path = tmp_path / name
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def test_unknown_version_names_it_and_the_known_ones(tmp_path):
    path = _copy_dump(tmp_path, lambda raw: raw.update(version="9.9"))
    proc = run_fr(str(path))
    assert proc.returncode == 2
    assert "unknown flight-recorder dump version '9.9'" in proc.stderr
    for known in ("2.2 (torch 2.4)", "2.10 (torch 2.10 - 2.13)"):
        assert known in proc.stderr


def test_version_2_2_never_had_a_json_dump(tmp_path):
    path = _copy_dump(tmp_path, lambda raw: raw.update(version="2.2"))
    proc = run_fr(str(path))
    assert proc.returncode == 2 and "torch only wrote as pickle" in proc.stderr


def test_pre_versioned_list_layout_is_refused(tmp_path):
    path = tmp_path / "trace_0"
    path.write_bytes(pickle.dumps([{"seq_id": 1, "profiling_name": "nccl:all_reduce"}], 2))
    proc = run_fr(str(path))
    assert proc.returncode == 2 and "torch < 2.3" in proc.stderr


class _Plant:
    """A pickle that would create a directory when loaded by a plain pickle.load."""

    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (os.mkdir, (self.target,))


@pytest.mark.parametrize("payload", ["mkdir", "eval"])
def test_pickles_that_would_run_code_are_refused(tmp_path, payload):
    planted = tmp_path / "planted"
    if payload == "mkdir":
        obj = {"version": "2.10", "entries": [_Plant(str(planted))]}
        expected = "refusing to load posix.mkdir" if os.name == "posix" else "refusing to load"
    else:
        obj = {"version": "2.10", "entries": [], "x": eval}
        expected = "refusing to load builtins.eval"
    path = tmp_path / "fr_trace_rank_0"
    path.write_bytes(pickle.dumps(obj, protocol=2))
    proc = run_fr(str(path))
    assert proc.returncode == 2
    assert expected in proc.stderr
    assert not planted.exists()


def test_files_that_are_not_dumps(tmp_path):
    text = tmp_path / "notes_0.txt"
    text.write_text("hello")
    proc = run_fr(str(text))
    assert proc.returncode == 2 and "cannot tell which rank" in proc.stderr
    named = tmp_path / "rank_0"
    named.write_text("hello")
    proc = run_fr(str(named))
    assert proc.returncode == 2 and "neither a pickle nor JSON" in proc.stderr
    proc = run_fr(str(tmp_path / "absent_0"))
    assert proc.returncode == 2 and "no such file or directory" in proc.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_fr(str(empty))
    assert proc.returncode == 2 and "no dump files" in proc.stderr


def test_entry_without_a_sequence_number_is_an_error(tmp_path):
    path = _copy_dump(tmp_path, lambda raw: raw["entries"][1].pop("collective_seq_id"))
    proc = run_fr(str(path))
    assert proc.returncode == 2 and "entry #1 lacks the key 'collective_seq_id'" in proc.stderr


def test_two_dumps_of_one_rank_in_the_same_format_are_an_error(tmp_path):
    folder = tmp_path / "dumps"
    shutil.copytree(os.path.join(BUILT, "v2.7", "pickle"), folder)
    shutil.copy(folder / "nccl_trace_rank_0", folder / "other_rank_0")
    proc = run_fr(str(folder))
    assert proc.returncode == 2 and "a second pickle dump for rank 0" in proc.stderr


def test_directories_skip_files_without_a_rank(tmp_path):
    folder = tmp_path / "dumps"
    shutil.copytree(os.path.join(BUILT, "v2.4", "pickle"), folder)
    (folder / "README.txt").write_text("job 1234")
    code, doc = fr_json(str(folder))
    assert code == 1 and [os.path.basename(i["path"]) for i in doc["ignored"]] == ["README.txt"]


def test_usage_errors_exit_2(tmp_path):
    assert run_fr().returncode == 2
    assert run_fr(os.path.join(BUILT, "v2.7", "pickle"), "--format", "sarif").returncode == 2
    proc = run_fr(os.path.join(BUILT, "v2.7", "pickle"), "--world-size", "0")
    assert proc.returncode == 2


def test_output_file_and_json_document_shape(tmp_path):
    out = tmp_path / "report.json"
    proc = run_fr(os.path.join(BUILT, "v2.6", "pickle"), "--format", "json", "--output", str(out))
    assert proc.returncode == 1 and proc.stdout == ""
    doc = json.loads(out.read_text())
    assert set(doc) == {"version", "tool", "tool_version", "command", "exit_code", "world_size",
                        "missing_ranks", "dumps", "ignored", "notes", "groups", "verdict"}
    assert doc["version"] == 1 and doc["command"] == "fr" and doc["world_size"] == 3
    assert set(doc["verdict"]) == {"kind", "group", "summary", "seq", "op", "ahead_ranks",
                                   "behind_ranks", "missing_ranks", "entry_rank", "entry",
                                   "frame", "mismatch", "behind_last", "static_analysis"}
    assert doc["dumps"][0]["library"] == "2.21.5"


def test_user_frame_skips_library_and_cpp_frames():
    from rankcheck.fr.frames import user_frame
    from rankcheck.fr.model import Frame

    frames = [
        Frame("??", 0, "c10d::ProcessGroupGloo::allreduce"),
        Frame("Ops.cpp", 1042, "c10d::ops::allreduce_"),
        Frame("/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", 2801,
              "all_reduce"),
        Frame("/venv/lib/python3.11/site-packages/lightning/fabric/strategies/ddp.py", 130,
              "all_reduce"),
        Frame("/usr/lib/python3.11/runpy.py", 88, "_run_code"),
        Frame("/home/me/proj/train.py", 57, "step"),
        Frame("/home/me/proj/train.py", 90, "main"),
    ]
    assert user_frame(frames) == Frame("/home/me/proj/train.py", 57, "step")
    assert user_frame(frames[:5]) is None
