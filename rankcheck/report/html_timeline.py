"""The page `verify --html` and `fr --html` write: what was observed, each rank's collective
timeline aligned by sequence number, the divergence marked. Fed by the verifier's RunResult (and
its judged findings) and by the flight-recorder Analysis; drawn with report.html's blocks."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Sequence

from rankcheck import __version__
from rankcheck.ftypes import Finding
from rankcheck.report.html import Cell, Column, esc, page, timeline_table

if TYPE_CHECKING:  # the verifier's and the reader's types, without importing their packages
    from rankcheck.fr.analyze import Analysis, GroupReport
    from rankcheck.verify.vtypes import RunResult


def _verdicts(findings: Sequence[Finding]) -> str:
    if not findings:
        return ""
    rows = "".join(
        f"<tr><td><code>{esc(f.code)}</code></td><td class=\"mono\">{esc(f.location.path)}:{f.location.line}</td>"
        f"<td class=\"verdict\">{esc(f.verdict or '')}</td><td>{esc(f.verdict_detail)}</td></tr>"
        for f in findings
    )
    return (
        "<h2>Static findings, judged by the run</h2><table class=\"summary\"><thead><tr><th>Code</th><th>Where</th>"
        f"<th>Verdict</th><th>Detail</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def verify_page(result: RunResult, findings: Sequence[Finding] = ()) -> str:
    """Each rank's collectives by number; the row the ranks diverged at marked."""
    divergence = result.divergence
    part: Optional[int] = None
    if divergence is not None and divergence.entered:
        part = min(c.seq for c in divergence.entered) - 1
    held = {(o.rank, o.blocked.seq) for o in result.ranks if o.blocked is not None}
    if divergence is not None:
        held |= {(c.rank, c.seq) for c in divergence.entered}
    rows = max((o.collectives for o in result.ranks), default=0)
    columns = []
    for outcome in result.ranks:
        cells: List[Optional[Cell]] = []
        for seq in range(1, rows + 1):
            call = next((c for c in outcome.calls if c.seq == seq), None)
            if call is None:
                cells.append(None)
                continue
            group = "" if call.group == "WORLD" else f" on {call.group}"
            mark = "held here" if (outcome.rank, seq) in held else ""
            cells.append(Cell(f"{call.op}{group} {call.args}".strip(), str(call.site) if call.site else "", 0, mark))
        label = f"rank {outcome.rank}: {outcome.ending(short=True) or outcome.state}"
        columns.append(Column(label, tuple(cells), part))
    summary = divergence.summary if divergence is not None else f"outcome: {result.outcome}"
    body = [
        f"<h2>{esc(result.outcome.upper())}</h2><p class=\"message\">{esc(summary)}</p>",
        f"<p class=\"where\">{result.nproc} ranks, gloo on CPU, {result.elapsed:.1f} s; command <code>{esc(' '.join(result.command))}</code></p>",
        "<h2>Collective timelines</h2>",
        timeline_table(columns, [f"#{seq}" for seq in range(1, rows + 1)], "Each rank's collectives by sequence number; the marked row is where they diverged."),
        _verdicts(findings),
    ]
    return page(f"rankcheck verify: {result.target}", f"rankcheck {__version__} · replay on {result.nproc} gloo ranks", "\n".join(b for b in body if b))


def _group_table(group: GroupReport, analysis: Analysis) -> str:
    from rankcheck.fr.analyze import sizes_text
    from rankcheck.fr.frames import user_frame

    entries = {
        dump.rank: {e.seq: e for e in dump.entries if e.group == group.group and e.seq > 0}
        for dump in analysis.dumps
        if dump.rank in group.ranks
    }
    seqs = sorted({seq for by_seq in entries.values() for seq in by_seq})
    if not seqs:
        return "<p class=\"where\">No collectives recorded in this group.</p>"
    low, high = seqs[0], seqs[-1]
    verdict = group.verdict
    part = verdict.seq - low if verdict.seq is not None and low <= verdict.seq <= high else None
    if verdict.seq is not None and verdict.seq > high:
        high = verdict.seq  # the collective nobody recorded yet: a row of its own
        part = high - low
    columns = []
    for rank in group.ranks:
        by_seq = entries.get(rank, {})
        cells: List[Optional[Cell]] = []
        for seq in range(low, high + 1):
            entry = by_seq.get(seq)
            if entry is None:
                cells.append(None)
                continue
            frame = user_frame(entry.frames)
            sizes = f" {sizes_text(entry.input_sizes)}" if entry.input_sizes else ""
            # gloo records no start: "scheduled" is its normal; only an entry in flight is news
            mark = "in flight" if entry.state == "started" else ""
            at = f"{short_path(frame.filename)}:{frame.line}" if frame is not None else ""
            cells.append(Cell(f"{entry.op}{sizes}", at, 0, mark))
        label = f"rank {rank}" + (" (no dump)" if rank in group.missing_ranks else "")
        columns.append(Column(label, tuple(cells), part))
    return timeline_table(columns, [f"#{seq}" for seq in range(low, high + 1)], "Each rank's recorded collectives by sequence number; the marked row is the verdict's.")


def short_path(path: str) -> str:
    """The file and its folder: a recorded path is the job machine's, long and absolute."""
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-2:])


def fr_page(analysis: Analysis) -> str:
    """Per process group: the verdict, and the ranks' recorded timelines side by side."""
    body = []
    if analysis.missing_ranks:
        body.append(f"<p class=\"message\">No dump from rank(s) {esc(', '.join(map(str, analysis.missing_ranks)))}.</p>")
    for group in analysis.groups:
        desc = f" ({group.desc})" if group.desc and group.desc != "undefined" else ""
        body.append(f"<section class=\"card group\" data-group=\"{esc(group.group)}\"><header><span class=\"badge\">{esc(group.verdict.kind)}</span>"
                    f"<strong>process group {esc(group.group)}{esc(desc)}</strong></header>")
        body.append(f"<p class=\"message\">{esc(group.verdict.summary)}</p>")
        body.append(_group_table(group, analysis))
        body.append("</section>")
    if not analysis.groups:
        body.append("<p class=\"none\">No process groups recorded.</p>")
    return page("rankcheck fr: flight-recorder post-mortem", f"rankcheck {__version__} · {len(analysis.dumps)} dumps, world size {analysis.world_size}", "\n".join(body))


def write_page(path: str, text: str) -> Optional[str]:
    """Write the page; the reason when it cannot be written."""
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        return str(exc)
    return None
