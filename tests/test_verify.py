"""`rankcheck verify`: every runnable corpus program gets its verdict on two real gloo ranks.

Each hazard (a file with `# expect:` markers) must be `confirmed` at every marker; each safe twin
must be `not-reproduced` at every line that calls a collective (as if the analyzer had flagged
it). Adding a file to corpus/runnable adds a test.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from rankcheck.ftypes import Finding, Location
from rankcheck.verify import verify_findings

pytestmark = [pytest.mark.verify, pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent
RUNNABLE = REPO / "corpus" / "runnable"
EXPECT = re.compile(r"#\s*expect:\s*((?:RC\d{3})(?:\s*,\s*RC\d{3})*)")
COLLECTIVES = {
    "all_reduce",
    "broadcast",
    "barrier",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "gather",
    "gather_object",
    "scatter",
    "scatter_object_list",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "all_to_all",
    "all_to_all_single",
    "broadcast_object_list",
    "new_group",
    "monitored_barrier",
}

pytest.importorskip("torch")


def marker_findings(path: Path) -> list[Finding]:
    findings = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = EXPECT.search(line)
        if match:
            for code in re.split(r"\s*,\s*", match.group(1)):
                findings.append(Finding(code, "corpus marker", Location(str(path), number, 1)))
    return findings


def collective_lines(path: Path) -> list[int]:
    """Lines of the file that call `dist.<collective>(...)`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in COLLECTIVES and isinstance(node.func.value, ast.Name):
                if node.func.value.id == "dist":
                    lines.add(node.lineno)
    return sorted(lines)


ALL = sorted(RUNNABLE.glob("*.py"))
HAZARDS = [p for p in ALL if marker_findings(p)]
TWINS = [p for p in ALL if not marker_findings(p)]


def test_the_runnable_corpus_is_large_and_balanced():
    assert len(ALL) >= 30
    assert len(HAZARDS) >= 15 and len(TWINS) >= 15
    for path in ALL:
        text = path.read_text(encoding="utf-8")
        assert 'if __name__ == "__main__":' in text, path.name
        assert 'dist.init_process_group("gloo")' in text, path.name
        assert "dist.destroy_process_group()" in text, path.name


@pytest.mark.parametrize("path", HAZARDS, ids=lambda p: p.name)
def test_hazard_is_confirmed(path: Path):
    findings = marker_findings(path)
    judged = verify_findings(findings, timeout=60.0, announce=None)
    assert len(judged) == len(findings), [f.verdict_detail for f in judged]
    for finding in judged:
        assert finding.verdict == "confirmed", (
            f"{finding.location}: {finding.verdict}: {finding.verdict_detail}"
        )
        assert "never entered" in finding.verdict_detail or "entered" in finding.verdict_detail


@pytest.mark.parametrize("path", TWINS, ids=lambda p: p.name)
def test_safe_twin_is_not_reproduced(path: Path):
    lines = collective_lines(path)
    assert lines, "a safe twin must issue collectives"
    claims = [Finding("RC101", "claimed hazard", Location(str(path), line, 1)) for line in lines]
    judged = verify_findings(claims, timeout=60.0, announce=None)
    assert len(judged) == len(claims), (
        "an unpredicted divergence was observed: " + judged[-1].verdict_detail
    )
    for finding in judged:
        assert finding.verdict == "not-reproduced", (
            f"{finding.location}: {finding.verdict}: {finding.verdict_detail}"

        )
        assert "every rank issued the same" in finding.verdict_detail
