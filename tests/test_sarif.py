"""`--format sarif`: valid SARIF 2.1.0 (the official schema), what GitHub code scanning needs, and
fingerprints that keep a finding's identity across edits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from rankcheck.ftypes import ChainStep, Finding, Guard, Location, RankSource
from rankcheck.report import ReportContext, get_renderer
from rankcheck.rules_meta import all_rules

SCHEMA_PATH = Path(__file__).with_name("sarif-schema-2.1.0.json")
REPO = Path(__file__).resolve().parent.parent

TRAIN = """\
import torch
import torch.distributed as dist
from metrics import compute_mean


def step(t):
    rank = dist.get_rank()
    if rank == 0:
        compute_mean(t)
"""

METRICS = """\
import torch.distributed as dist


def compute_mean(t):
    dist.all_reduce(t)
    return t
"""


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def assert_valid(validator, log: dict) -> None:
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def cross_file_finding(project: Path, train_text: str = TRAIN) -> Finding:
    """The finding the analyzer reports for TRAIN/METRICS, built by hand with real positions."""
    train, metrics = project / "train.py", project / "metrics.py"
    call_line = line_of(train_text, "compute_mean(")
    if_line = line_of(train_text, "if rank == 0:")
    rank_line = line_of(train_text, "dist.get_rank()")
    reduce_line = line_of(METRICS, "all_reduce")
    call = Location(str(train), call_line, 9, call_line, 24)
    return Finding(
        code="RC101",
        message="compute_mean() runs only on ranks where rank == 0; the other ranks never enter "
        "all_reduce and the job hangs",
        location=call,
        guard=Guard(
            Location(str(train), if_line, 5, if_line, 18),
            "if rank == 0:",
            "rank == 0",
            source=RankSource("dist.get_rank()", Location(str(train), rank_line, 12, rank_line, 27)),
        ),
        chain=(
            ChainStep(call, "compute_mean()"),
            ChainStep(Location(str(metrics), reduce_line, 5, reduce_line, 23), "dist.all_reduce"),
        ),
        collective="all_reduce",
    )


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "metrics.py").write_text(METRICS)
    return tmp_path


def render(findings, root: Path) -> dict:
    text = get_renderer("sarif")(findings, ReportContext(format="sarif", root=str(root)))
    return json.loads(text)


def test_cross_file_finding_is_valid_sarif_with_evidence(project, validator):
    log = render([cross_file_finding(project)], project)
    assert_valid(validator, log)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"

    (result,) = run["results"]
    assert result["ruleId"] == "RC101"
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "RC101"
    assert result["level"] == "error"
    assert "rank == 0" in result["message"]["text"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "train.py", "uriBaseId": "%SRCROOT%"}
    call_line = line_of(TRAIN, "compute_mean(t)")
    assert physical["region"] == {
        "startLine": call_line, "startColumn": 9, "endLine": call_line, "endColumn": 24,
    }

    guard, source = result["relatedLocations"]
    assert guard["physicalLocation"]["region"]["startLine"] == line_of(TRAIN, "if rank == 0:")
    assert "if rank == 0:" in guard["message"]["text"]
    assert source["physicalLocation"]["region"]["startLine"] == line_of(TRAIN, "get_rank")
    assert "dist.get_rank()" in source["message"]["text"]
    assert guard["id"] != source["id"]

    (flow,) = result["codeFlows"]
    steps = flow["threadFlows"][0]["locations"]
    assert [s["location"]["physicalLocation"]["artifactLocation"]["uri"] for s in steps] == [
        "train.py", "metrics.py",
    ]
    assert [s["executionOrder"] for s in steps] == [1, 2]
    assert "compute_mean()" in steps[0]["location"]["message"]["text"]
    assert "dist.all_reduce" in steps[1]["location"]["message"]["text"]
    assert steps[1]["location"]["physicalLocation"]["region"]["startLine"] == line_of(
        METRICS, "all_reduce"
    )


def test_driver_lists_every_registered_rule_with_github_required_fields(project, validator):
    log = render([], project)
    assert_valid(validator, log)
    assert log["runs"][0]["results"] == []
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "rankcheck"
    assert driver["version"] and driver["informationUri"].startswith("https://")
    registry = all_rules()
    assert [r["id"] for r in driver["rules"]] == [rule.code for rule in registry]
    for descriptor, rule in zip(driver["rules"], registry):
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["fullDescription"]["text"]
        assert descriptor["help"]["text"]
        assert descriptor["help"]["markdown"] == rule.doc()
        assert descriptor["helpUri"] == rule.help_uri
        expected_level = {"error": "error", "warning": "warning"}.get(rule.severity, "note")
        assert descriptor["defaultConfiguration"]["level"] == expected_level


def test_fingerprint_survives_edits_above_and_tracks_the_line(project):
    before = render([cross_file_finding(project)], project)["runs"][0]["results"][0]

    shifted = "# a new header comment\n\n" + TRAIN.replace("import torch\n", "import os\nimport torch\n", 1)
    (project / "train.py").write_text(shifted)
    moved = render([cross_file_finding(project, shifted)], project)["runs"][0]["results"][0]
    assert moved["locations"][0]["physicalLocation"]["region"]["startLine"] == (
        before["locations"][0]["physicalLocation"]["region"]["startLine"] + 3
    )
    assert moved["partialFingerprints"] == before["partialFingerprints"]
    assert moved["fingerprints"] == before["fingerprints"]

    # Re-indenting the line or adding a trailing comment keeps the identity too.
    cosmetic = shifted.replace("        compute_mean(t)", "        compute_mean(t)   # rank 0 only")
    (project / "train.py").write_text(cosmetic)
    commented = render([cross_file_finding(project, cosmetic)], project)["runs"][0]["results"][0]
    assert commented["partialFingerprints"] == before["partialFingerprints"]

    # Changing the reported code changes it.
    changed = shifted.replace("compute_mean(t)", "compute_mean(t * 2)")
    (project / "train.py").write_text(changed)
    edited = render([cross_file_finding(project, changed)], project)["runs"][0]["results"][0]
    assert edited["partialFingerprints"] != before["partialFingerprints"]


def test_identical_lines_get_distinct_fingerprints_by_occurrence(project, validator):
    twice = TRAIN + "    if rank == 0:\n        compute_mean(t)\n"
    (project / "train.py").write_text(twice)
    first = cross_file_finding(project, twice)
    second_line = len(twice.splitlines())
    second = Finding(
        code="RC101",
        message=first.message,
        location=Location(first.location.path, second_line, 9, second_line, 24),
        guard=first.guard,
        chain=first.chain,
        collective="all_reduce",
    )
    log = render([first, second], project)
    assert_valid(validator, log)
    hashes = [r["partialFingerprints"]["primaryLocationLineHash"] for r in log["runs"][0]["results"]]
    assert hashes[0] != hashes[1]
    assert hashes[0].split(":")[0] == hashes[1].split(":")[0]  # same line text, other occurrence


def test_unreadable_file_and_path_outside_root_still_produce_valid_sarif(tmp_path, validator):
    root = tmp_path / "project"
    root.mkdir()
    elsewhere = tmp_path / "elsewhere" / "gone.py"  # never written: the reader must fall back
    finding = Finding(
        code="RC102",
        message="`return` on ranks where rank != 0 skips barrier() at line 9",
        location=Location(str(elsewhere), 4, 9),
        collective="barrier",
    )
    log = render([finding, finding], root)
    assert_valid(validator, log)
    first, second = log["runs"][0]["results"]
    artifact = first["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": elsewhere.as_uri()}
    assert first["partialFingerprints"]["primaryLocationLineHash"] != (
        second["partialFingerprints"]["primaryLocationLineHash"]
    )
    assert "endLine" not in first["locations"][0]["physicalLocation"]["region"]


def test_uris_are_relative_to_the_git_checkout_when_the_project_is_a_subdirectory(tmp_path, validator):
    checkout = tmp_path / "monorepo"
    (checkout / ".git").mkdir(parents=True)  # what `git init` leaves; no git needed here
    project = checkout / "services" / "trainer"
    project.mkdir(parents=True)
    (project / "train.py").write_text(TRAIN)
    (project / "metrics.py").write_text(METRICS)
    log = render([cross_file_finding(project)], project)
    assert_valid(validator, log)
    run = log["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == checkout.resolve().as_uri() + "/"
    result = run["results"][0]
    artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": "services/trainer/train.py", "uriBaseId": "%SRCROOT%"}


def test_message_text_cannot_forge_an_embedded_link(project, validator):
    finding = Finding(
        code="RC101",
        message="grads[rank](1) decides whether all_reduce runs",
        location=Location(str(project / "train.py"), 9, 9),
    )
    log = render([finding], project)
    assert_valid(validator, log)
    assert log["runs"][0]["results"][0]["message"]["text"] == (
        "grads\\[rank\\](1) decides whether all_reduce runs"
    )


def test_paths_relative_to_the_working_directory_and_odd_names(project, validator, monkeypatch):
    odd = project / "sub dir" / "train 100%.py"
    odd.parent.mkdir()
    odd.write_text(TRAIN)
    monkeypatch.chdir(project)
    finding = Finding(code="RC101", message="m", location=Location("sub dir/train 100%.py", 9, 9))
    log = render([finding], project)
    assert_valid(validator, log)
    artifact = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": "sub%20dir/train%20100%25.py", "uriBaseId": "%SRCROOT%"}


@pytest.mark.slow
def test_cli_sarif_end_to_end(project, validator):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-m", "rankcheck", "--format", "sarif", "train.py"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    assert_valid(validator, log)
    results = log["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["RC101"]
    result = results[0]
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "train.py", "uriBaseId": "%SRCROOT%"}
    assert physical["region"]["startLine"] == line_of(TRAIN, "compute_mean(t)")
    flow_files = [
        step["location"]["physicalLocation"]["artifactLocation"]["uri"]
        for step in result["codeFlows"][0]["threadFlows"][0]["locations"]
    ]
    assert flow_files[0] == "train.py" and flow_files[-1] == "metrics.py"
    assert result["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == line_of(
        TRAIN, "if rank == 0:"
    )

    # The same run on a file with lines added above reports the same fingerprint.
    (project / "train.py").write_text("# header\n\n" + TRAIN)
    again = subprocess.run(
        [sys.executable, "-m", "rankcheck", "--format", "sarif", "train.py"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )
    moved = json.loads(again.stdout)["runs"][0]["results"][0]
    assert moved["partialFingerprints"] == result["partialFingerprints"]
    assert moved["locations"][0]["physicalLocation"]["region"]["startLine"] == (
        physical["region"]["startLine"] + 2
    )
