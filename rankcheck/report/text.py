"""Text output. The first line of each finding is exactly `path:line:col: CODE message` (ruff's
concise form, so editors and CI log parsers jump to it); `full` adds indented evidence lines."""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from rankcheck.ftypes import RANK_IDENTITY, SAFE, Finding, RankSource
from rankcheck.report import ReportContext
from rankcheck.rules_meta import rule_name


def evidence_lines(finding: Finding) -> list[str]:
    lines = []
    guard = finding.guard
    if guard is not None:
        loc = guard.location
        text = f"  guard: {loc.path}:{loc.line}:{loc.column}  `{guard.text}`"
        if guard.source is not None:
            src = guard.source
            what = "rank" if guard.kind == RANK_IDENTITY else "per-rank data"
            text += f"  ({what} comes from {src.phrase} at {src.location.path}:{src.location.line})"
        lines.append(text)
        if guard.source is not None and guard.source.steps:
            lines.append(_steps_line(guard.source))
    if finding.source is not None:
        src = finding.source
        lines.append(f"  source: {src.phrase} at {src.location.path}:{src.location.line}")
        if src.steps:
            lines.append(_steps_line(src))
    if finding.chain:
        steps = []
        for step in finding.chain:
            piece = f"{step.location.path}:{step.location.line} {step.callee}"
            if step.note:
                piece += f" ({step.note})"
            steps.append(piece)
        lines.append("  path:  " + " -> ".join(steps))
    if finding.fix is not None:
        lines.append(f"  fix ({finding.fix.applicability}): {finding.fix.message}")
    if finding.verdict:
        detail = f": {finding.verdict_detail}" if finding.verdict_detail else ""
        lines.append(f"  verify: {finding.verdict}{detail}")
    return lines


def _steps_line(source: RankSource) -> str:
    """The way from the rank source to the guard: `via:` and each call that returned it."""
    return "  via:   " + " -> ".join(f"{step.text} at {step.location.path}:{step.location.line}" for step in source.steps)


def render(findings: Sequence[Finding], ctx: ReportContext) -> str:
    out: list[str] = []
    for f in findings:
        loc = f.location
        fixable = f.fix is not None and (ctx.unsafe_fixes or f.fix.applicability == SAFE)
        out.append(f"{loc.path}:{loc.line}:{loc.column}: {f.code} {'[*] ' if fixable else ''}{f.message}")
        if ctx.format != "concise":
            out.extend(evidence_lines(f))
    if not findings and ctx.files_checked:
        out.append("All checks passed!")  # ruff's words: a clean run says so instead of printing nothing
    if ctx.show_statistics and findings:
        if out:
            out.append("")
        counts = Counter(f.code for f in findings)
        for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            out.append(f"{n:5d}  {code}  {rule_name(code)}")
    return "\n".join(out) + ("\n" if out else "")
