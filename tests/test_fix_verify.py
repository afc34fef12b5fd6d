"""The third proof of a fix: the runnable corpus programs replayed on real gloo ranks. Before the
fix the verifier confirms the finding; after it, every collective of the fixed program is
issued alike on both ranks (not-reproduced) and no divergence is observed at all. One case also
runs `rankcheck verify --html` and reads the page: the ranks' timelines part where they hung."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rankcheck.api import check_paths
from rankcheck.fix import attach_fixes
from rankcheck.fix.edits import apply_edits
from rankcheck.ftypes import Finding, Location

pytest.importorskip("torch")
from rankcheck.verify import verify_findings

pytestmark = [pytest.mark.verify, pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent
RUNNABLE = REPO / "corpus" / "runnable"
sys.path.insert(0, str(REPO / "bench"))
import report_page  # noqa: E402

CASES = ["rc101_metric_allreduce_rank0.py", "rc101_rank0_helper_reduces.py", "rc102_return_before_barrier.py"]


def collective_claims(path: Path) -> list:
    """A claim on every `dist.<op>(...)` line of the program: each must be issued alike."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = sorted({
        node.lineno for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name) and node.func.value.id == "dist"
        and node.func.attr in ("all_reduce", "barrier", "broadcast", "all_gather")
    })
    return [Finding("RC101", "claimed hazard", Location(str(path), line, 1)) for line in lines]


@pytest.mark.parametrize("name", CASES)
def test_verify_confirms_before_the_fix_and_finds_no_divergence_after(name: str, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    path = tmp_path / name
    shutil.copy(RUNNABLE / name, path)
    # the hang finding (the case's set-up also draws a readiness warning, RC201, with nothing to verify)
    findings = attach_fixes([f for f in check_paths([path], root=tmp_path, use_cache=False) if not f.code.startswith("RC2")])
    (finding,) = findings
    assert finding.fix is not None

    before = verify_findings([finding], timeout=60.0, announce=None)
    assert [f.verdict for f in before] == ["confirmed"], before[0].verdict_detail

    fixed, _ = apply_edits(path.read_text(encoding="utf-8"), finding.fix.edits)
    path.write_text(fixed, encoding="utf-8")
    claims = collective_claims(path)
    after = verify_findings(claims, timeout=60.0, announce=None)
    assert len(after) == len(claims), "a divergence was observed after the fix: " + after[-1].verdict_detail
    assert {f.verdict for f in after} == {"not-reproduced"}, [f.verdict_detail for f in after]


def test_verify_html_page_shows_the_timelines_parting(tmp_path: Path) -> None:
    path = tmp_path / "seed.py"
    shutil.copy(RUNNABLE / "rc101_metric_allreduce_rank0.py", path)
    page = tmp_path / "verify.html"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-m", "rankcheck", "verify", str(path), "--html", str(page)],
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # diverged
    dom = report_page.read_dom(page.read_text())
    assert dom.scripts == 0 and dom.external == []
    (table,) = dom.tables
    assert [h.split(":")[0] for h in table.headers] == ["rank 0", "rank 1"]
    assert report_page.aligned_until_parting(table)
    part = table.row_states.index("part")
    assert table.rows[part][0].text.startswith("all_reduce") and table.rows[part][0].part
    assert "confirmed" in page.read_text()
