"""`--source`: matching the flight recorder's divergent line against rankcheck's findings.

The dumps are the recorded torch 2.13 ones; their frames hold the recording machine's absolute
paths, so these tests also cover mapping a dump from another machine onto a local checkout.
The findings are real `rankcheck.ftypes.Finding` values placed on chosen lines, which pins down
the matching rules (finding line, guard line, chain lines) independently of what the analyzer
currently finds; the end-to-end run through `rankcheck.check_paths` is in test_fr_scenarios.py.
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from rankcheck.fr.analyze import analyze
from rankcheck.fr.crossref import cross_reference
from rankcheck.fr.reader import read_dumps
from rankcheck.ftypes import ChainStep, Finding, Guard, Location

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDED = os.path.join(HERE, "data", "fr", "recorded-torch2.13")
SCENARIOS = os.path.join(HERE, "fr_scenarios")
sys.path.insert(0, SCENARIOS)

from launch import expected_line  # noqa: E402 - after the path insert

SCRIPT = "extra_allreduce.py"
LINE = expected_line(SCRIPT, "divergent")


@pytest.fixture()
def project(tmp_path):
    """A checkout elsewhere: the recorded /…/tests/fr_scenarios/extra_allreduce.py lives here."""
    root = tmp_path / "checkout"
    (root / "fr_scenarios").mkdir(parents=True)
    shutil.copy(os.path.join(SCENARIOS, SCRIPT), root / "fr_scenarios" / SCRIPT)
    return root


def analysis_of(folder, source_root):
    read = read_dumps([os.path.join(RECORDED, folder)])
    return analyze(read.dumps, source_root=str(source_root))


def finding(path, line, guard_line=None, chain_lines=()):
    return Finding(
        code="RC101",
        message="`dist.all_reduce` runs only on ranks where `rank == 0` is true",
        location=Location(str(path), line, 9),
        guard=Guard(Location(str(path), guard_line, 5), "if rank == 0:", "rank == 0")
        if guard_line else None,
        chain=tuple(ChainStep(Location(str(path), n, 5), "helper()") for n in chain_lines),
        collective="all_reduce",
    )


def static_of(analysis):
    return analysis.primary.static


def test_finding_on_the_recorded_line_is_reported_flagged(project):
    local = project / "fr_scenarios" / SCRIPT
    match = finding(local, LINE)
    result = cross_reference(analysis_of("extra_allreduce-2-on-demand/pickle", project),
                             str(project), findings=[finding(local, 1), match])
    static = static_of(result)
    assert static.status == "flagged" and static.finding is match
    assert static.local_path == os.path.realpath(local)
    assert static.frame.line == LINE and "its line" in static.detail
    # two ranks, equal sides: a flagged rank-guarded collective settles behind vs. ahead
    assert result.primary.kind == "split"
    assert "rank 0 ran ahead into an extra all_reduce" in static.detail


def test_guard_or_chain_line_also_matches(project):
    local = project / "fr_scenarios" / SCRIPT
    analysis = analysis_of("extra_allreduce-2-on-demand/pickle", project)
    by_guard = finding(local, 200, guard_line=LINE)
    static = static_of(cross_reference(analysis, str(project), findings=[by_guard]))
    assert static.status == "flagged" and "its rank guard" in static.detail
    by_chain = finding(local, 200, chain_lines=(150, LINE))
    static = static_of(cross_reference(analysis, str(project), findings=[by_chain]))
    assert static.status == "flagged" and "its call chain" in static.detail


def test_no_finding_on_the_line_is_reported_missed_plainly(project):
    local = project / "fr_scenarios" / SCRIPT
    analysis = analysis_of("extra_allreduce-2-on-demand/pickle", project)
    static = static_of(cross_reference(analysis, str(project), findings=[finding(local, LINE + 1)]))
    assert static.status == "missed"
    assert f"{SCRIPT}:{LINE}" in static.detail and "did not flag" in static.detail


def test_recorded_files_outside_the_source_tree_are_not_found(tmp_path):
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    analysis = analysis_of("extra_allreduce-2-on-demand/pickle", empty)
    static = static_of(cross_reference(analysis, str(empty), findings=[]))
    assert static.status == "not-found" and SCRIPT in static.detail


def test_mismatch_looks_up_the_odd_rank_line(project):
    shutil.copy(os.path.join(SCENARIOS, "shape_mismatch.py"), project / "fr_scenarios")
    local = project / "fr_scenarios" / "shape_mismatch.py"
    line = expected_line("shape_mismatch.py", "divergent")
    analysis = analysis_of("shape_mismatch-4-on-demand/pickle", project)
    static = static_of(cross_reference(analysis, str(project), findings=[finding(local, line)]))
    assert static.status == "flagged" and static.frame.line == line


def test_json_dumps_have_no_frame_to_look_up(project):
    analysis = analysis_of("extra_allreduce-2-on-demand/json", project)
    static = static_of(cross_reference(analysis, str(project), findings=[]))
    assert static.status == "no-frame"


def test_idle_verdicts_are_not_cross_referenced(project):
    analysis = analysis_of("host_stall-2-on-demand/pickle", project)
    assert static_of(cross_reference(analysis, str(project), findings=[])) is None
