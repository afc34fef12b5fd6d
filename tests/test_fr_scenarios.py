"""`rankcheck fr` on REAL flight-recorder dumps: gloo ranks run each scenario and dump themselves.

One module fixture runs every scenario at once (2 and 4 ranks; on-demand dumps, plus one scenario
through a real gloo timeout), then each test reads the dumps back with `rankcheck fr` as a
subprocess and checks that the verdict names the right rank and the right line of the scenario
script (the line carrying `# fr: divergent` / `# fr: last`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = os.path.join(HERE, "fr_scenarios")
sys.path.insert(0, SCENARIOS)

from launch import Job, expected_line, run_scenarios  # noqa: E402 - after the path insert

pytestmark = [pytest.mark.verify, pytest.mark.slow]

pytest.importorskip("torch.distributed")

WORLDS = (2, 4)
SCRIPTS = (
    "extra_allreduce.py",
    "sleep_before_barrier.py",
    "shape_mismatch.py",
    "host_stall.py",
    "crash_before_dump.py",
)
TIMEOUT_JOB = Job("sleep_before_barrier.py", 2, mode="on-timeout", gloo_timeout_s=2.0)
SUBGROUP_JOB = Job("subgroup_extra.py", 4)
JOBS = [Job(s, w) for s in SCRIPTS for w in WORLDS] + [TIMEOUT_JOB, SUBGROUP_JOB]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = str(tmp_path_factory.mktemp("fr_runs"))
    return run_scenarios(JOBS, base, deadline_s=120.0)


def run_fr(*args, cwd=None):
    proc = subprocess.run(
        [sys.executable, "-m", "rankcheck", "fr", *args],
        check=False, capture_output=True, text=True, cwd=cwd or os.path.dirname(HERE),
        timeout=120,
    )
    return proc


def fr_json(*args):
    proc = run_fr(*args, "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def dumps_of(runs, script, world, kind="pickle"):
    run = runs[Job(script, world).name]
    folder = run.dir(kind)
    expected = world - 1 if script == "crash_before_dump.py" else world
    present = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    assert len(present) == expected, run.describe()
    return folder


def is_line(frame, script, marker):
    return (
        frame is not None
        and os.path.basename(frame["path"]) == script
        and frame["line"] == expected_line(script, marker)
    )


@pytest.mark.parametrize("world", WORLDS)
def test_extra_allreduce_names_rank_zero_and_its_line(runs, world):
    code, doc = fr_json(dumps_of(runs, "extra_allreduce.py", world))
    verdict = doc["verdict"]
    assert code == 1 and doc["exit_code"] == 1
    assert verdict["kind"] == ("ahead" if world == 4 else "split")
    assert verdict["ahead_ranks"] == [0]
    assert verdict["behind_ranks"] == list(range(1, world))
    assert (verdict["seq"], verdict["op"]) == (3, "all_reduce")
    assert is_line(verdict["frame"], "extra_allreduce.py", "divergent")
    text = run_fr(dumps_of(runs, "extra_allreduce.py", world)).stdout
    line = expected_line("extra_allreduce.py", "divergent")
    assert f"extra_allreduce.py:{line}" in text
    if world == 4:
        assert "rank 0 ran ahead into an extra collective: #3 all_reduce" in text


@pytest.mark.parametrize("world", WORLDS)
def test_rank_sleeping_before_barrier_is_named_behind(runs, world):
    code, doc = fr_json(dumps_of(runs, "sleep_before_barrier.py", world))
    verdict = doc["verdict"]
    assert code == 1
    assert verdict["kind"] == ("behind" if world == 4 else "split")
    assert verdict["behind_ranks"] == [1]
    assert (verdict["seq"], verdict["op"]) == (2, "barrier")
    assert is_line(verdict["frame"], "sleep_before_barrier.py", "divergent")
    # where the behind rank was last seen: its completed all_reduce, one line above the sleep
    [last] = verdict["behind_last"]
    assert last["rank"] == 1 and last["entry"]["seq"] == 1 and last["entry"]["op"] == "all_reduce"
    states = {s["rank"]: s for s in doc["groups"][0]["rank_states"]}
    assert states[1]["last_enqueued"] == 1 and states[1]["pending"] == []
    assert states[0]["last_enqueued"] == 2 and states[0]["pending"][0]["op"] == "barrier"
    text = run_fr(dumps_of(runs, "sleep_before_barrier.py", world)).stdout
    if world == 4:
        assert "rank 1 is behind: never entered collective #2 barrier" in text


@pytest.mark.parametrize("world", WORLDS)
def test_shape_disagreement_is_a_mismatch_naming_the_odd_rank(runs, world):
    code, doc = fr_json(dumps_of(runs, "shape_mismatch.py", world))
    verdict = doc["verdict"]
    assert code == 1
    assert verdict["kind"] == "mismatch"
    assert verdict["mismatch"]["field"] == "shape"
    assert (verdict["seq"], verdict["op"]) == (2, "all_reduce")
    sizes = {tuple(v["ranks"]): v["entry"]["input_sizes"] for v in verdict["mismatch"]["variants"]}
    odd = world - 1
    assert sizes[(odd,)] == [[3]]
    assert sizes[tuple(range(odd))] == [[4]]
    if world == 4:  # with a majority, the odd one out is the culprit
        assert verdict["entry_rank"] == odd
        assert verdict["mismatch"]["variants"][0]["ranks"] == [0, 1, 2]
    assert is_line(verdict["frame"], "shape_mismatch.py", "divergent")


@pytest.mark.parametrize("world", WORLDS)
def test_host_stall_after_the_same_collective_is_no_divergence(runs, world):
    code, doc = fr_json(dumps_of(runs, "host_stall.py", world))
    verdict = doc["verdict"]
    assert code == 0 and doc["exit_code"] == 0
    assert verdict["kind"] == "idle"
    assert (verdict["seq"], verdict["op"]) == (2, "barrier")
    assert is_line(verdict["frame"], "host_stall.py", "last")
    states = doc["groups"][0]["rank_states"]
    assert all(s["last_enqueued"] == 2 for s in states)
    # completion is discovered asynchronously: a rank's recorder may not have marked #2 yet,
    # but #2 completed somewhere, which takes every rank
    assert any(s["last_completed"] == 2 for s in states)
    assert all(p["seq"] == 2 for s in states for p in s["pending"])
    text = run_fr(dumps_of(runs, "host_stall.py", world)).stdout
    assert "host-side stall" in text


@pytest.mark.parametrize("world", WORLDS)
def test_a_rank_without_dump_is_named_missing(runs, world):
    folder = dumps_of(runs, "crash_before_dump.py", world)
    code, doc = fr_json(folder)
    crashed = world - 1
    assert code == 1
    assert doc["missing_ranks"] == [crashed]  # world size inferred from the dumps' pg_config
    verdict = doc["verdict"]
    assert verdict["kind"] == "missing" and verdict["missing_ranks"] == [crashed]
    assert (verdict["seq"], verdict["op"]) == (2, "all_reduce")
    assert is_line(verdict["frame"], "crash_before_dump.py", "divergent")
    text = run_fr(folder).stdout
    assert f"rank {crashed} left no dump" in text
    # told the world size explicitly, a larger world names every absent rank
    code, doc = fr_json(folder, "--world-size", str(world + 1))
    assert doc["missing_ranks"] == [crashed, world]


def test_real_gloo_timeout_dumps_name_the_rank_behind(runs):
    run = runs[TIMEOUT_JOB.name]
    folder = run.dir("timeout")
    names = sorted(os.listdir(folder))
    # torch's naming for timeout dumps: <TORCH_FR_DUMP_TEMP_FILE><rank>, no extension
    assert names == ["fr_trace_rank_0", "fr_trace_rank_1"], run.describe()
    assert "collective failed" in run.logs[0], run.describe()  # rank 0 really timed out
    code, doc = fr_json(folder)
    verdict = doc["verdict"]
    assert code == 1
    assert verdict["behind_ranks"] == [1] and verdict["ahead_ranks"] == [0]
    assert (verdict["seq"], verdict["op"]) == (2, "barrier")
    assert is_line(verdict["frame"], "sleep_before_barrier.py", "divergent")


def test_divergence_inside_a_subgroup_is_reported_per_group(runs):
    code, doc = fr_json(dumps_of(runs, "subgroup_extra.py", 4))
    assert code == 1
    by_desc = {g["desc"]: g for g in doc["groups"]}
    world_group = by_desc["default_pg"]
    assert world_group["ranks"] == [0, 1, 2, 3] and world_group["verdict"]["kind"] == "idle"
    [pair] = [g for g in doc["groups"] if g["desc"] != "default_pg"]
    assert pair["ranks"] == [0, 1]  # membership from the dumps: torch 2.13's pg_config is unusable
    verdict = pair["verdict"]
    assert verdict["kind"] == "split"
    assert verdict["ahead_ranks"] == [1] and verdict["behind_ranks"] == [0]
    assert (verdict["seq"], verdict["op"]) == (2, "all_reduce")
    assert is_line(verdict["frame"], "subgroup_extra.py", "divergent")
    assert doc["verdict"]["group"] == pair["group"]


@pytest.mark.parametrize("world", WORLDS)
def test_json_dumps_give_the_same_verdict_without_stacks(runs, world):
    code, doc = fr_json(dumps_of(runs, "extra_allreduce.py", world, kind="json"))
    verdict = doc["verdict"]
    assert code == 1
    assert {d["format"] for d in doc["dumps"]} == {"json"}
    assert verdict["ahead_ranks"] == [0] and (verdict["seq"], verdict["op"]) == (3, "all_reduce")
    assert verdict["frame"] is None
    assert any("JSON dumps never record" in note for note in doc["notes"])


def test_pickle_is_preferred_when_a_rank_has_both_formats(runs):
    run = runs[Job("extra_allreduce.py", 2).name]
    code, doc = fr_json(run.dir("pickle"), run.dir("json"))
    assert code == 1
    assert {d["format"] for d in doc["dumps"]} == {"pickle"}
    assert sorted(os.path.basename(i["path"]) for i in doc["ignored"]) == [
        "fr_trace_rank_0.json", "fr_trace_rank_1.json"]
    assert is_line(doc["verdict"]["frame"], "extra_allreduce.py", "divergent")


def test_live_dumps_match_the_documented_2_10_layout(runs):
    """Torch upgrades change dumps: the layout table must still describe what this torch writes."""
    from rankcheck.fr.layouts import LAYOUTS
    from rankcheck.fr.reader import load_raw

    folder = dumps_of(runs, "extra_allreduce.py", 2)
    for name in sorted(os.listdir(folder)):
        fmt, raw = load_raw(os.path.join(folder, name))
        layout = LAYOUTS[raw["version"]]
        assert raw["version"] == "2.10" and fmt in layout.formats
        assert set(raw) - {"version"} <= layout.top_keys
        for entry in raw["entries"]:
            assert set(entry) <= layout.entry_keys


def test_source_cross_reference_finds_the_rc101_finding_on_the_divergent_line(runs, tmp_path):
    if importlib.util.find_spec("rankcheck.api") is None:
        pytest.skip("rankcheck.api (the static analyzer's library API) is not written yet")
    # the job's source as a project of its own, elsewhere: the recorded frames point into
    # tests/fr_scenarios, so this also maps a dump from "another machine" onto a checkout
    project = tmp_path / "project"
    shutil.copytree(SCENARIOS, project / "fr_scenarios",
                    ignore=shutil.ignore_patterns("__pycache__"))

    (project / "pyproject.toml").write_text('[project]\nname = "job"\n')
    folder = dumps_of(runs, "extra_allreduce.py", 4)
    code, doc = fr_json(folder, "--source", str(project))
    static = doc["verdict"]["static_analysis"]
    line = expected_line("extra_allreduce.py", "divergent")
    assert code == 1
    assert static is not None and static["status"] == "flagged", static
    assert static["frame"]["line"] == line
    assert static["local_path"] == str((project / "fr_scenarios" / "extra_allreduce.py").resolve())
    assert static["finding"]["code"] == "RC101"
    assert static["finding"]["location"]["line"] == line
    assert "flagged:" in static["detail"] and "RC101" in static["detail"]
