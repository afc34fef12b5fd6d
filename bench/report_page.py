"""The HTML report as a person sees it: headless Chromium renders the page, dumps the DOM it built
and takes a screenshot.

    python bench/report_page.py [PATHS...] [--out DIR] [--install]

Checks PATHS (default: corpus/runnable, the fixes' and sequences' showcase) with
`--format html`, writes DIR/report.html, DIR/report.dom.html (what Chromium rendered, script
off) and DIR/report.png, and prints what the DOM holds: findings, sequence tables, and whether
every table is aligned up to the row where the ranks part. `--install` installs Debian's
chromium with apt-get when it is missing. The test suite (tests/test_report_html.py) uses the
same functions.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, List, Optional, Sequence

REPO = Path(__file__).resolve().parent.parent
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
# Nothing leaves the machine: no network, no updates, no first-run or sync traffic.
QUIET_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
# JavaScript off: the page carries a Content-Security-Policy that allows no script and no load
# from anywhere (report.html), so what Chromium renders here is what a reader with script off
# sees. (Chromium's own switch to disable script also disables its headless --dump-dom and
# --screenshot, which run through it.)


def find_chromium() -> Optional[str]:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def install_chromium() -> Optional[str]:
    """Debian's package, as the README says; needs root."""
    subprocess.run(["apt-get", "install", "-y", "chromium"], check=False, stdout=subprocess.DEVNULL)
    return find_chromium()


def _chromium(browser: str, args: Sequence[str], timeout: float = 90.0) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="rankcheck-chromium-") as profile:
        return subprocess.run(
            [browser, *QUIET_FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def dump_dom(browser: str, page: Path) -> str:
    proc = _chromium(browser, ["--dump-dom", page.resolve().as_uri()])
    if proc.returncode != 0 or "<html" not in proc.stdout:
        raise RuntimeError(f"chromium --dump-dom failed ({proc.returncode}): {proc.stderr[-500:]}")
    return proc.stdout


def screenshot(browser: str, page: Path, png: Path, width: int = 1280, height: int = 2400) -> Path:
    proc = _chromium(browser, [f"--window-size={width},{height}", "--hide-scrollbars", f"--screenshot={png}", page.resolve().as_uri()])
    if proc.returncode != 0 or not png.exists():
        raise RuntimeError(f"chromium --screenshot failed ({proc.returncode}): {proc.stderr[-500:]}")
    return png


# -- what the rendered DOM holds -----------------------------------------------------------------
@dataclass
class SequenceTable:
    finding: str  # the id of the section it is in
    headers: List[str] = field(default_factory=list)
    rows: List[Dict[int, DomCell]] = field(default_factory=list)
    row_states: List[str] = field(default_factory=list)  # "before", "part", "after"


@dataclass
class DomCell:
    text: str
    part: bool


@dataclass
class Finding:
    id: str
    code: str
    path: str
    line: int
    svg_nodes: int = 0
    source_lines: int = 0


class ReportDom(HTMLParser):
    """The findings and the sequence tables of a rendered report page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.findings: List[Finding] = []
        self.tables: List[SequenceTable] = []
        self.scripts = 0
        self.external: List[str] = []
        self._table: Optional[SequenceTable] = None
        self._header: Optional[List[str]] = None
        self._in_th = False

    def handle_starttag(self, tag: str, attrs_list: list) -> None:
        attrs = {k: v or "" for k, v in attrs_list}
        classes = attrs.get("class", "").split()
        if tag == "script":
            self.scripts += 1
        for key in ("src", "href"):
            if attrs.get(key, "").startswith(("http:", "https:", "//")):
                self.external.append(attrs[key])
        if tag == "link" and attrs.get("rel") == "stylesheet":
            self.external.append(attrs.get("href", ""))
        if tag == "section" and "finding" in classes:
            self.findings.append(Finding(attrs["id"], attrs["data-code"], attrs["data-path"], int(attrs["data-line"])))
        elif tag == "g" and "node" in classes and self.findings:
            self.findings[-1].svg_nodes += 1
        elif tag == "tr" and attrs.get("data-line") and self.findings:
            self.findings[-1].source_lines += 1
        elif tag == "table" and "sequences" in classes:
            self._table = SequenceTable(self.findings[-1].id if self.findings else "")
            self.tables.append(self._table)
        elif self._table is not None and tag == "th" and "data-class" in attrs:
            self._in_th = True
            self._table.headers.append("")
        elif self._table is not None and tag == "tr" and "step" in classes:
            self._table.rows.append({})
            self._table.row_states.append(next(c for c in classes if c in ("before", "part", "after")))
        elif self._table is not None and tag == "td" and "data-class" in attrs:
            self._table.rows[-1][int(attrs["data-class"])] = DomCell(attrs.get("data-text", ""), attrs.get("data-part") == "true")

    def handle_data(self, data: str) -> None:
        if self._in_th and self._table is not None:
            self._table.headers[-1] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "th":
            self._in_th = False
        elif tag == "table":
            self._table = None


def read_dom(text: str) -> ReportDom:
    dom = ReportDom()
    dom.feed(text)
    dom.close()
    return dom


def aligned_until_parting(table: SequenceTable) -> bool:
    """Every row before the part row holds the same step in each column; the part row is marked
    in some column; nothing before it is."""
    if "part" not in table.row_states:
        return False
    part = table.row_states.index("part")
    for row in table.rows[:part]:
        texts = {cell.text for cell in row.values()}
        if len(texts) != 1 or any(cell.part for cell in row.values()):
            return False
    return any(cell.part for cell in table.rows[part].values())


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=[str(REPO / "corpus" / "runnable")])
    parser.add_argument("--out", type=Path, default=Path("report-page"))
    parser.add_argument("--install", action="store_true", help="apt-get install chromium when it is missing")
    args = parser.parse_args(argv)
    browser = find_chromium() or (install_chromium() if args.install else None)
    if browser is None:
        print("chromium not found (Debian: apt-get install -y chromium, or run with --install)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    page = args.out / "report.html"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    check = subprocess.run(
        [sys.executable, "-m", "rankcheck", *args.paths, "--no-cache", "--unsafe-fixes", "--format", "html", "--output", str(page)],
        capture_output=True, text=True, env=env,
    )
    if check.returncode == 2 or not page.exists():
        print(check.stderr, file=sys.stderr)
        return 2
    dom_text = dump_dom(browser, page)
    (args.out / "report.dom.html").write_text(dom_text, encoding="utf-8")
    png = screenshot(browser, page, args.out / "report.png")
    dom = read_dom(dom_text)
    aligned = sum(aligned_until_parting(t) for t in dom.tables)
    print(f"page: {page} ({page.stat().st_size} bytes), screenshot: {png} ({png.stat().st_size} bytes)")
    print(f"findings rendered: {len(dom.findings)}; path pictures: {sum(1 for f in dom.findings if f.svg_nodes)}; "
          f"sequence tables: {len(dom.tables)}, aligned up to the parting row: {aligned}")
    print(f"scripts: {dom.scripts}; external resources: {len(dom.external)}")
    return 0 if aligned == len(dom.tables) and not dom.scripts and not dom.external else 1


if __name__ == "__main__":
    sys.exit(main())
