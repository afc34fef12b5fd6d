"""`--format html`: one self-contained page a person reads (no script, no network, no CDN).

A summary table, then per finding: the message, the source around the guard and the collective,
the path guard -> call chain -> collective drawn as an inline SVG, the collective sequences of the
two classes of ranks side by side (what rankcheck.sequences compared) with the step where they
part highlighted, and the fix when there is one. The page works with JavaScript off: there is
none. The building blocks (page, timeline table, path picture) also draw `verify --html` and
`fr --html` (report.html_timeline).
"""

from __future__ import annotations

import html
import os
from collections import Counter
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from rankcheck import __version__
from rankcheck.ftypes import Finding, Location, RankSequence
from rankcheck.report import ReportContext
from rankcheck.rules_meta import rule_name

CONTEXT_LINES = 2  # around each marked line of an excerpt
MAX_GAP = 12  # marked lines further apart than this get excerpts of their own

STYLE = """
:root { --ink:#1f2328; --muted:#59636e; --line:#d1d9e0; --paper:#ffffff; --soft:#f6f8fa;
  --guard:#fff4d6; --guard-edge:#d4a72c; --call:#ddf4ff; --call-edge:#54aeff;
  --coll:#ffebe9; --coll-edge:#cf222e; --ok:#1a7f37; --warn:#9a6700; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
  color: var(--ink); background: var(--soft); }
header.page { background: #24292f; color: #fff; padding: 18px 32px; }
header.page h1 { margin: 0; font-size: 22px; }
header.page p { margin: 4px 0 0; color: #d0d7de; }
main { max-width: 1180px; margin: 0 auto; padding: 20px 32px 48px; }
h2 { font-size: 18px; margin: 28px 0 10px; }
h3 { font-size: 14px; margin: 18px 0 6px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
table { border-collapse: collapse; width: 100%; background: var(--paper); }
th, td { border: 1px solid var(--line); padding: 6px 10px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
a { color: #0969da; text-decoration: none; } a:hover { text-decoration: underline; }
.card { background: var(--paper); border: 1px solid var(--line); border-radius: 8px; padding: 16px 20px; margin: 18px 0; }
.card > header { display: flex; gap: 12px; align-items: baseline; flex-wrap: wrap; }
.badge { display: inline-block; font-weight: 700; font-size: 12px; border-radius: 999px; padding: 2px 10px;
  background: var(--coll); color: var(--coll-edge); border: 1px solid var(--coll-edge); }
.badge.warning { background: #fff8c5; color: var(--warn); border-color: var(--warn); }
.where { color: var(--muted); }
.message { margin: 8px 0 0; font-size: 15px; }
.message code, td code { background: var(--soft); border: 1px solid var(--line); border-radius: 4px; padding: 0 4px; }
.pill { display: inline-block; border-radius: 999px; padding: 0 8px; font-size: 12px; font-weight: 600; }
.pill.safe { background: #dafbe1; color: var(--ok); } .pill.unsafe { background: #fff8c5; color: var(--warn); }
.excerpt { border: 1px solid var(--line); border-radius: 6px; overflow-x: auto; margin: 6px 0; }
.excerpt .file { background: var(--soft); padding: 4px 10px; border-bottom: 1px solid var(--line); color: var(--muted); }
.excerpt table { border: 0; }
.excerpt td { border: 0; padding: 0 10px; white-space: pre; }
.excerpt td.no { color: var(--muted); text-align: right; width: 1%; user-select: none; }
.excerpt tr.gap td { color: var(--muted); }
.excerpt tr.guard td { background: var(--guard); } .excerpt tr.guard td.no { box-shadow: inset 3px 0 var(--guard-edge); }
.excerpt tr.call td { background: var(--call); } .excerpt tr.call td.no { box-shadow: inset 3px 0 var(--call-edge); }
.excerpt tr.collective td { background: var(--coll); } .excerpt tr.collective td.no { box-shadow: inset 3px 0 var(--coll-edge); }
.excerpt td.tag { color: var(--muted); font-family: system-ui, sans-serif; font-size: 12px; text-align: right; }
.picture { overflow-x: auto; padding: 4px 0; }
.scroll { overflow-x: auto; }
.sequences th.no, .sequences td.no { width: 3.5em; color: var(--muted); }
.sequences caption { text-align: left; padding: 0 0 6px; }
.sequences td.cell { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.sequences td.empty { background: var(--soft); }
.sequences td.part { background: var(--coll); box-shadow: inset 4px 0 var(--coll-edge); font-weight: 700; }
.sequences tr.after td.cell:not(.part) { color: var(--muted); }
.sequences .line { display: flex; flex-wrap: wrap; justify-content: space-between; column-gap: 12px; }
.sequences .line > span:first-child { white-space: pre; }
.sequences .at { color: var(--muted); font-weight: 400; white-space: nowrap; font-size: 12px; }
.sequences .mark { color: var(--coll-edge); font-family: system-ui, sans-serif; font-size: 12px; margin-left: 8px; }
.fix pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; overflow-x: auto; }
.fix .add { color: var(--ok); } .fix .del { color: var(--coll-edge); }
.verdict { font-weight: 600; }
.none { color: var(--ok); font-size: 17px; }
.legend span { display: inline-block; padding: 0 8px; margin-right: 8px; border-radius: 4px; }
"""


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def page(title: str, subtitle: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        # Self-contained by construction: no script runs and nothing loads from anywhere.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{esc(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<header class=\"page\"><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></header>\n"
        f"<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def prose(text: str) -> str:
    """Escaped text with its `code` spans as <code>."""
    pieces = text.split("`")
    if len(pieces) % 2 == 0:  # an odd backtick: leave the text as it is
        return esc(text)
    return "".join(f"<code>{esc(p)}</code>" if i % 2 else esc(p) for i, p in enumerate(pieces))


def where(loc: Optional[Location], root: str = "") -> str:
    if loc is None:
        return ""
    return f"{display_path(loc.path, root)}:{loc.line}"


def display_path(path: str, root: str = "") -> str:
    if root and os.path.isabs(path):
        try:
            relative = os.path.relpath(path, root)
        except ValueError:
            return path
        return path if relative.startswith(os.pardir) else relative
    return path


# -- the path picture ----------------------------------------------------------------------------
@dataclass(frozen=True)
class PathNode:
    kind: str  # "guard", "call", "collective"
    title: str
    detail: str


NODE_FILL = {"guard": ("#fff4d6", "#d4a72c"), "call": ("#ddf4ff", "#54aeff"), "collective": ("#ffebe9", "#cf222e")}
CHAR_WIDTH = 7.4  # 12.5px monospace, roughly


def path_svg(nodes: Sequence[PathNode], label: str) -> str:
    """Boxes left to right joined by arrows: the guard, each call on the way, the collective."""
    widths = [max(120.0, CHAR_WIDTH * max(len(n.title), len(n.detail)) + 28) for n in nodes]
    gap, height, top = 46.0, 58.0, 8.0
    total = sum(widths) + gap * (len(nodes) - 1) + 16
    parts = [
        f'<svg class="path" role="img" aria-label="{esc(label)}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{total:.0f}" height="{height + 2 * top:.0f}" viewBox="0 0 {total:.0f} {height + 2 * top:.0f}">',
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" orient=\"auto\">"
        "<path d=\"M0,0 L10,5 L0,10 z\" fill=\"#59636e\"/></marker></defs>",
    ]
    x = 8.0
    for index, (node, width) in enumerate(zip(nodes, widths)):
        fill, edge = NODE_FILL.get(node.kind, NODE_FILL["call"])
        parts.append(
            f'<g class="node {esc(node.kind)}"><rect x="{x:.1f}" y="{top}" width="{width:.1f}" height="{height}" rx="8" '
            f'fill="{fill}" stroke="{edge}" stroke-width="1.5"/>'
            f'<text x="{x + 14:.1f}" y="{top + 24}" font-family="ui-monospace, Menlo, Consolas, monospace" font-size="12.5" '
            f'font-weight="700" fill="#1f2328">{esc(node.title)}</text>'
            f'<text x="{x + 14:.1f}" y="{top + 44}" font-family="system-ui, sans-serif" font-size="12" fill="#59636e">{esc(node.detail)}</text></g>'
        )
        if index < len(nodes) - 1:
            parts.append(
                f'<line x1="{x + width + 3:.1f}" y1="{top + height / 2}" x2="{x + width + gap - 4:.1f}" y2="{top + height / 2}" '
                'stroke="#59636e" stroke-width="1.6" marker-end="url(#arrow)"/>'
            )
        x += width + gap
    parts.append("</svg>")
    return f'<div class="picture">{"".join(parts)}</div>'


def finding_path(finding: Finding, root: str) -> List[PathNode]:
    nodes: List[PathNode] = []
    if finding.guard is not None:
        nodes.append(PathNode("guard", finding.guard.text, f"guard at {where(finding.guard.location, root)}"))
    for index, step in enumerate(finding.chain):
        last = index == len(finding.chain) - 1
        nodes.append(PathNode("collective" if last else "call", step.callee, where(step.location, root)))
    return nodes


# -- timelines side by side ----------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    text: str
    at: str = ""  # where, for people
    depth: int = 0
    mark: str = ""  # a word on the cell ("held", "never entered")


@dataclass(frozen=True)
class Column:
    label: str
    cells: Tuple[Optional[Cell], ...]  # None: nothing at that position
    part: Optional[int]  # the row where this column parts from the others


def timeline_table(columns: Sequence[Column], row_labels: Sequence[str], caption: str, row_head: str = "#") -> str:
    """Columns side by side, one row per position, the rows where the columns part marked."""
    rows = max((len(c.cells) for c in columns), default=0)
    parts = [f'<div class="scroll"><table class="sequences"><caption class="where">{esc(caption)}</caption><thead><tr><th class="no">{esc(row_head)}</th>']
    parts.extend(f'<th data-class="{i}">{prose(c.label)}</th>' for i, c in enumerate(columns))
    parts.append("</tr></thead><tbody>")
    first_part = min((c.part for c in columns if c.part is not None), default=None)
    for row in range(rows):
        state = "after" if first_part is not None and row > first_part else ("part" if row == first_part else "before")
        label = row_labels[row] if row < len(row_labels) else str(row + 1)
        parts.append(f'<tr class="step {state}" data-index="{row}"><td class="no mono">{esc(label)}</td>')
        for index, column in enumerate(columns):
            cell = column.cells[row] if row < len(column.cells) else None
            parted = column.part == row
            classes = "cell" + (" part" if parted else "") + ("" if cell is not None else " empty")
            if cell is None:
                text = "(ends here)" if parted else ""
                parts.append(f'<td class="{classes}" data-class="{index}" data-part="{str(parted).lower()}">{esc(text)}</td>')
                continue
            indent = "&nbsp;&nbsp;" * cell.depth
            at = f'<span class="at">{esc(cell.at)}</span>' if cell.at else ""
            mark = f'<span class="mark">{esc(cell.mark)}</span>' if cell.mark else ""
            marker = "&#9654; " if parted else ""
            parts.append(
                f'<td class="{classes}" data-class="{index}" data-part="{str(parted).lower()}" data-text="{esc(cell.text)}">'
                f'<div class="line"><span>{marker}{indent}{esc(cell.text)}{mark}</span>{at}</div></td>'
            )
        parts.append("</tr>")
    parts.append("</tbody></table></div>")
    return "".join(parts)


def sequence_columns(sequences: Sequence[RankSequence], root: str) -> List[Column]:
    return [
        Column(
            seq.ranks,
            tuple(Cell(step.text, where(step.location, root), step.depth) for step in seq.steps),
            seq.diverges_at,
        )
        for seq in sequences
    ]


# -- source excerpts -----------------------------------------------------------------------------
class Sources:
    def __init__(self) -> None:
        self._lines: Dict[str, Optional[List[str]]] = {}

    def lines(self, path: str) -> Optional[List[str]]:
        if path not in self._lines:
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    self._lines[path] = handle.read().splitlines()
            except OSError:
                self._lines[path] = None
        return self._lines[path]


def excerpt(sources: Sources, path: str, marks: Dict[int, Tuple[str, str]], root: str) -> str:
    """The file's lines around the marked ones (line -> (css class, tag)), gaps elided."""
    lines = sources.lines(path)
    if not lines or not marks:
        return ""
    wanted = sorted(marks)
    spans: List[List[int]] = []
    for line in wanted:
        low, high = max(1, line - CONTEXT_LINES), min(len(lines), line + CONTEXT_LINES)
        if spans and low <= spans[-1][1] + MAX_GAP:
            spans[-1][1] = max(spans[-1][1], high)
        else:
            spans.append([low, high])
    rows = []
    for index, (low, high) in enumerate(spans):
        if index:
            rows.append('<tr class="gap"><td class="no">&#8942;</td><td></td><td></td></tr>')
        for number in range(low, high + 1):
            css, tag = marks.get(number, ("", ""))
            rows.append(
                f'<tr class="{css}" data-line="{number}"><td class="no">{number}</td>'
                f'<td class="src">{esc(lines[number - 1])}</td><td class="tag">{esc(tag)}</td></tr>'
            )
    return f'<div class="excerpt"><div class="file mono">{esc(display_path(path, root))}</div><table>{"".join(rows)}</table></div>'


def finding_excerpts(sources: Sources, finding: Finding, root: str) -> str:
    by_path: Dict[str, Dict[int, Tuple[str, str]]] = {}
    if finding.guard is not None:
        by_path.setdefault(finding.guard.location.path, {})[finding.guard.location.line] = ("guard", "rank guard")
    by_path.setdefault(finding.location.path, {}).setdefault(finding.location.line, ("call", "reported here"))
    for index, step in enumerate(finding.chain):
        last = index == len(finding.chain) - 1
        marks = by_path.setdefault(step.location.path, {})
        if last:
            marks[step.location.line] = ("collective", "the collective")
        else:
            marks.setdefault(step.location.line, ("call", f"calls {step.callee}"))
    return "".join(excerpt(sources, path, marks, root) for path, marks in by_path.items())


# -- the page ------------------------------------------------------------------------------------
def fix_block(sources: Sources, finding: Finding) -> str:
    """The fix as a diff of the lines it replaces."""
    fix = finding.fix
    if fix is None:
        return ""
    lines = []
    for edit in fix.edits:
        old = (sources.lines(edit.location.path) or [])[edit.location.line - 1 : edit.end.line - 1]
        lines.append(f'<span class="where">@@ line {edit.location.line} @@</span>')
        lines.extend(f'<span class="del">- {esc(line)}</span>' for line in old)
        lines.extend(f'<span class="add">+ {esc(line)}</span>' for line in edit.content.splitlines())
    return (
        f'<div class="fix"><h3>Fix {pill(fix.applicability)}</h3><p>{prose(fix.message)}</p>'
        f'<pre>{chr(10).join(lines)}</pre></div>'
    )


def finding_card(sources: Sources, index: int, finding: Finding, root: str) -> str:
    loc = finding.location
    severity = "warning" if finding.severity == "warning" else "error"
    parts = [
        f'<section class="card finding" id="finding-{index}" data-code="{esc(finding.code)}" '
        f'data-path="{esc(display_path(loc.path, root))}" data-line="{loc.line}">',
        f'<header><span class="badge {severity}">{esc(finding.code)}</span><strong>{esc(finding.name)}</strong>'
        f'<span class="where mono">{esc(display_path(loc.path, root))}:{loc.line}:{loc.column}</span></header>',
        f'<p class="message">{prose(finding.message)}</p>',
    ]
    if finding.verdict:
        parts.append(f'<p class="verdict">verify: {esc(finding.verdict)} {esc(finding.verdict_detail)}</p>')
    if finding.guard is not None and finding.guard.source is not None:
        src = finding.guard.source
        ways = "".join(f", then {prose(step.text)} at {esc(where(step.location, root))}" for step in src.steps)
        parts.append(f'<p class="where">The rank comes from <code>{esc(src.text)}</code> at {esc(where(src.location, root))}{ways}.</p>')
    nodes = finding_path(finding, root)
    if nodes:
        parts.append("<h3>Path</h3>" + path_svg(nodes, " -> ".join(n.title for n in nodes)))
    source = finding_excerpts(sources, finding, root)
    if source:
        parts.append("<h3>Source</h3>" + source)
    if finding.sequences:
        parts.append(
            "<h3>Collective sequences</h3>"
            + timeline_table(
                sequence_columns(finding.sequences, root),
                [],
                "What each class of ranks issues in this function, in order; the marked row is where they part.",
            )
        )
    parts.append(fix_block(sources, finding))
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def pill(applicability: str) -> str:
    return f'<span class="pill {esc(applicability)}">{esc(applicability)}</span>' if applicability else ""


def summary_tables(findings: Sequence[Finding], root: str) -> str:
    counts = Counter(f.code for f in findings)
    rows = "".join(f"<tr><td><code>{esc(code)}</code></td><td>{esc(rule_name(code))}</td><td>{n}</td></tr>" for code, n in sorted(counts.items()))
    by_code = f'<table class="summary"><thead><tr><th>Code</th><th>Rule</th><th>Findings</th></tr></thead><tbody>{rows}</tbody></table>'
    listing = []
    for index, f in enumerate(findings, 1):
        fix = f.fix.applicability if f.fix is not None else ""
        listing.append(
            f'<tr><td><a href="#finding-{index}">{index}</a></td><td><code>{esc(f.code)}</code></td>'
            f'<td class="mono">{esc(display_path(f.location.path, root))}:{f.location.line}</td><td>{prose(f.message)}</td>'
            f"<td>{pill(fix)}</td><td>{esc(f.verdict or '')}</td></tr>"
        )
    index_table = (
        '<table class="index"><thead><tr><th>#</th><th>Code</th><th>Where</th><th>Message</th><th>Fix</th><th>Verify</th></tr></thead>'
        f"<tbody>{''.join(listing)}</tbody></table>"
    )
    return by_code + "<h2>Findings</h2>" + index_table


def render(findings: Sequence[Finding], ctx: ReportContext) -> str:
    root = os.path.abspath(ctx.root)
    subtitle = f"rankcheck {__version__} · {ctx.files_checked} file{'s' if ctx.files_checked != 1 else ''} checked in {root}"
    if not findings:
        return page("rankcheck report", subtitle, '<p class="none">No findings: every class of ranks issues the same collectives.</p>')
    sources = Sources()
    body = [f"<h2>Summary: {len(findings)} finding{'s' if len(findings) != 1 else ''}</h2>", summary_tables(findings, root)]
    body.extend(finding_card(sources, index, finding, root) for index, finding in enumerate(findings, 1))
    return page("rankcheck report", subtitle, "\n".join(body))
