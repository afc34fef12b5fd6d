"""The reports people look at: `--format html` rendered by headless Chromium (the DOM it built
and a screenshot), `--format markdown`, and the pages `verify --html` and `fr --html` write.

The structure is read from the DOM Chromium rendered, not from our own output: each finding is
there, with its path picture and source, and the two classes of ranks' sequences are aligned row
for row up to the one where they part, which is marked."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rankcheck.api import check_paths
from rankcheck.fix import attach_fixes
from rankcheck.fr.cli import main as fr_main
from rankcheck.report import ReportContext, get_renderer

REPO = Path(__file__).resolve().parent.parent
RUNNABLE = REPO / "corpus" / "runnable"
FR_DATA = REPO / "tests" / "data" / "fr" / "recorded-torch2.13"
sys.path.insert(0, str(REPO / "bench"))

import report_page  # noqa: E402  (bench/report_page.py: the same Chromium runs the bench makes)

SHOWN = ("rc101_metric_allreduce_rank0.py", "rc102_return_before_barrier.py", "rc101_rank0_helper_reduces.py")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("report")
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    for name in SHOWN:
        shutil.copy(RUNNABLE / name, root / name)
    return root


def render(project: Path, fmt: str) -> tuple:
    # the hang findings, each with its chain (the cases' readiness warnings, RC2xx, carry none)
    findings = attach_fixes([f for f in check_paths([project], root=project, use_cache=False) if not f.code.startswith("RC2")])
    return findings, get_renderer(fmt)(findings, ReportContext(format=fmt, root=str(project), files_checked=len(SHOWN)))


def test_the_page_is_self_contained_and_holds_every_finding(project: Path) -> None:
    findings, page = render(project, "html")
    dom = report_page.read_dom(page)
    assert dom.scripts == 0 and dom.external == []
    assert "default-src 'none'" in page  # no script runs, nothing loads, whatever the page holds
    assert [(f.code, f.line) for f in dom.findings] == [(f.code, f.location.line) for f in findings]
    assert all(f.svg_nodes >= 2 and f.source_lines >= 3 for f in dom.findings)
    assert len(dom.tables) == len(findings)
    assert all(report_page.aligned_until_parting(table) for table in dom.tables)


def test_markdown_is_a_table_and_a_mermaid_diagram_per_finding(project: Path) -> None:
    findings, text = render(project, "markdown")
    rows = [line for line in text.splitlines() if re.match(r"\| \d+ \| RC\d{3} \|", line)]
    assert len(rows) == len(findings)
    assert text.count("```mermaid\nflowchart TB") == len(findings)
    assert "safe: Call `dist.all_reduce()` on every rank" in text
    # The step where the classes part is styled in each diagram.
    assert len(re.findall(r"^  class \S+ part$", text, re.M)) == len(findings)


@pytest.mark.slow
def test_chromium_renders_the_page_as_a_person_sees_it(project: Path, tmp_path: Path) -> None:
    browser = report_page.find_chromium()
    if browser is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium; bench/report_page.py --install)")
    page = tmp_path / "report.html"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-m", "rankcheck", str(project), "--no-cache", "--select", "RC1", "--format", "html", "--output", str(page)],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == 1, proc.stderr  # findings: exit 1, the page still written
    dom = report_page.read_dom(report_page.dump_dom(browser, page))
    assert sorted(f.path for f in dom.findings) == sorted(SHOWN)
    assert {f.code for f in dom.findings} == {"RC101", "RC102"}
    assert len(dom.tables) == 3 and all(report_page.aligned_until_parting(t) for t in dom.tables)
    headers = {h.strip() for t in dom.tables for h in t.headers}
    assert "ranks where rank == 0 is true" in headers and "ranks where dist.get_rank() != 0 is false" in headers
    png = report_page.screenshot(browser, page, tmp_path / "report.png", height=1600)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000


def test_fr_html_aligns_each_ranks_recorded_collectives_and_marks_the_verdict(tmp_path: Path) -> None:
    page = tmp_path / "fr.html"
    out = tmp_path / "fr.txt"
    with out.open("w") as handle:
        code = fr_main([str(FR_DATA / "extra_allreduce-2-on-demand" / "pickle"), "--html", str(page)], stdout=handle)
    assert code == 1  # a hang verdict
    text = page.read_text()
    dom = report_page.read_dom(text)
    assert dom.scripts == 0 and dom.external == []
    (table,) = dom.tables
    assert [h.strip() for h in table.headers] == ["rank 0", "rank 1"]
    assert report_page.aligned_until_parting(table)
    part = table.row_states.index("part")
    assert table.rows[part][0].text.startswith("all_reduce") and table.rows[part][1].text == ""


def test_bad_html_target_is_a_clear_error_and_the_report_still_printed(tmp_path: Path, capsys) -> None:
    out = tmp_path / "fr.txt"
    with out.open("w") as handle:
        code = fr_main([str(FR_DATA / "extra_allreduce-2-on-demand" / "pickle"), "--html", str(tmp_path / "no" / "such" / "dir" / "x.html")], stdout=handle)
    assert code == 2 and "verdict" in out.read_text()
    assert "rankcheck fr: error: cannot write" in capsys.readouterr().err
