"""`--format markdown`: a pull-request comment. The findings as a table, and for each finding
with compared sequences a Mermaid flowchart (GitHub renders it): one lane per class of ranks,
the step where they part in red."""

from __future__ import annotations

import os
from typing import List, Sequence

from rankcheck.ftypes import Finding, RankSequence
from rankcheck.report import ReportContext
from rankcheck.report.html import display_path


def cell(text: str) -> str:
    """Text safe in a table cell: pipes escaped, one line."""
    return " ".join(text.replace("|", "\\|").split())


def label(text: str) -> str:
    """Text safe in a Mermaid label in double quotes."""
    return text.replace('"', "#quot;").replace("`", "")


def mermaid(sequences: Sequence[RankSequence], prefix: str) -> List[str]:
    lines = ["```mermaid", "flowchart TB"]
    parted: List[str] = []
    for lane, seq in enumerate(sequences):
        lines.append(f'  subgraph {prefix}{lane}["{label(seq.ranks)}"]')
        lines.append("    direction TB")
        ids = []
        for index, step in enumerate(seq.steps):
            node = f"{prefix}{lane}s{index}"
            where = f" · line {step.location.line}" if step.location is not None else ""
            lines.append(f'    {node}["{label("  " * step.depth + step.text + where)}"]')
            ids.append(node)
            if index == seq.diverges_at:
                parted.append(node)
        if not seq.steps or seq.diverges_at >= len(seq.steps):
            end = f"{prefix}{lane}end"
            lines.append(f'    {end}(["ends here"])')
            ids.append(end)
            parted.append(end)
        if len(ids) > 1:
            lines.append("    " + " --> ".join(ids))
        lines.append("  end")
    lines.append("  classDef part fill:#ffebe9,stroke:#cf222e,stroke-width:2px,color:#82071e")
    if parted:
        lines.append(f"  class {','.join(parted)} part")
    lines.append("```")
    return lines


def render(findings: Sequence[Finding], ctx: ReportContext) -> str:
    root = os.path.abspath(ctx.root)
    if not findings:
        return "### rankcheck\n\nNo findings.\n"
    out = [
        f"### rankcheck: {len(findings)} finding{'s' if len(findings) != 1 else ''}",
        "",
        "| | Code | Where | Message | Fix |",
        "| --- | --- | --- | --- | --- |",
    ]
    for index, f in enumerate(findings, 1):
        fix = f"{f.fix.applicability}: {f.fix.message}" if f.fix is not None else ""
        where = f"`{display_path(f.location.path, root)}:{f.location.line}`"
        out.append(f"| {index} | {f.code} | {where} | {cell(f.message)} | {cell(fix)} |")
    for index, f in enumerate(findings, 1):
        if not f.sequences:
            continue
        out.extend(["", f"<details><summary>{index}. {f.code} at {display_path(f.location.path, root)}:{f.location.line}: the collective sequences</summary>", ""])
        out.extend(mermaid(f.sequences, f"f{index}c"))
        out.extend(["", "</details>"])
    return "\n".join(out) + "\n"
