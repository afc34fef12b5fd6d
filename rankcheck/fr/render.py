"""Text and JSON output of `rankcheck fr`. Formatting only: the analysis decides everything.

JSON (`--format json`) is one document, stable, versioned by its `version` key (as `check --format json`):

    {"version": 1, "tool": "rankcheck", "tool_version": "...", "command": "fr",
     "exit_code": 0|1, "world_size": N, "missing_ranks": [...],
     "dumps": [{"rank", "path", "format", "dump_version", "entries", "has_stacks", "library"}],
     "ignored": [{"path", "reason"}], "notes": ["..."],
     "groups": [{"group", "desc", "ranks", "missing_ranks",
                 "rank_states": [{"rank", "last_enqueued", "last_started", "last_completed",
                                  "first_recorded", "pending": [ENTRY, ...]}],
                 "verdict": VERDICT}],
     "verdict": VERDICT of the most telling group, or null}

    VERDICT = {"kind": "mismatch|behind|ahead|split|missing|stalled|idle|empty", "group",
               "summary", "seq", "op", "ahead_ranks", "behind_ranks", "missing_ranks",
               "entry_rank", "entry": ENTRY|null, "frame": FRAME|null,
               "mismatch": null | {"field": "op|shape|dtype",
                                   "variants": [{"ranks", "entry": ENTRY, "frame": FRAME|null}]},
               "behind_last": [{"rank", "entry": ENTRY|null}],
               "static_analysis": null | {"status": "flagged|missed|not-found|no-frame|error",
                                          "detail", "frame": FRAME|null, "local_path",
                                          "finding": Finding.to_dict()|null}}
    ENTRY = {"seq", "op", "profiling_name", "input_sizes", "output_sizes", "input_dtypes",
             "output_dtypes", "state", "retired", "frame": FRAME|null}   (frame = user frame)
    FRAME = {"path", "line", "function"}

Sequence numbers and `last_*` counters are null when there is none (torch's -1).
"""

from __future__ import annotations

import json
from typing import List, Optional

from rankcheck.fr.analyze import (
    MISMATCH,
    Analysis,
    GroupReport,
    RankState,
    Verdict,
    sizes_text,
)
from rankcheck.fr.frames import user_frame
from rankcheck.fr.model import Entry, Frame

SCHEMA_VERSION = 1


def _frame_json(frame: Optional[Frame]):
    if frame is None:
        return None
    return {"path": frame.filename, "line": frame.line, "function": frame.function}


def _entry_json(entry: Optional[Entry]):
    if entry is None:
        return None
    return {
        "seq": entry.seq,
        "op": entry.op,
        "profiling_name": entry.profiling_name,
        "input_sizes": [list(s) for s in entry.input_sizes],
        "output_sizes": [list(s) for s in entry.output_sizes],
        "input_dtypes": list(entry.input_dtypes),
        "output_dtypes": list(entry.output_dtypes),
        "state": entry.state,
        "retired": entry.retired,
        "frame": _frame_json(user_frame(entry.frames)),
    }


def _static_json(verdict: Verdict):
    static = verdict.static
    if static is None:
        return None
    finding = static.finding
    return {
        "status": static.status,
        "detail": static.detail,
        "frame": _frame_json(static.frame),
        "local_path": static.local_path,
        "finding": finding.to_dict() if finding is not None else None,
    }


def verdict_json(verdict: Optional[Verdict]):
    if verdict is None:
        return None
    mismatch = None
    if verdict.kind == MISMATCH:
        mismatch = {
            "field": verdict.mismatch_field,
            "variants": [
                {"ranks": list(v.ranks), "entry": _entry_json(v.entry),
                 "frame": _frame_json(v.frame)}
                for v in verdict.variants
            ],
        }
    return {
        "kind": verdict.kind,
        "group": verdict.group,
        "summary": verdict.summary,
        "seq": verdict.seq,
        "op": verdict.op,
        "ahead_ranks": list(verdict.ahead_ranks),
        "behind_ranks": list(verdict.behind_ranks),
        "missing_ranks": list(verdict.missing_ranks),
        "entry_rank": verdict.entry_rank,
        "entry": _entry_json(verdict.entry),
        "frame": _frame_json(verdict.frame),
        "mismatch": mismatch,
        "behind_last": [{"rank": r, "entry": _entry_json(e)} for r, e in verdict.behind_last],
        "static_analysis": _static_json(verdict),
    }


def _state_json(state: RankState):
    return {
        "rank": state.rank,
        "last_enqueued": state.last_enqueued,
        "last_started": state.last_started,
        "last_completed": state.last_completed,
        "first_recorded": state.first_recorded,
        "pending": [_entry_json(e) for e in state.pending],
    }


def render_json(analysis: Analysis) -> str:
    from rankcheck import __version__

    document = {
        "version": SCHEMA_VERSION,
        "tool": "rankcheck",
        "tool_version": __version__,
        "command": "fr",
        "exit_code": analysis.exit_code,
        "world_size": analysis.world_size,
        "missing_ranks": list(analysis.missing_ranks),
        "dumps": [
            {"rank": d.rank, "path": d.path, "format": d.format, "dump_version": d.version,
             "entries": len(d.entries), "has_stacks": d.has_stacks, "library": d.library}
            for d in analysis.dumps
        ],
        "ignored": [{"path": p, "reason": r} for p, r in analysis.ignored],
        "notes": list(analysis.notes),
        "groups": [
            {"group": g.group, "desc": g.desc, "ranks": list(g.ranks),
             "missing_ranks": list(g.missing_ranks),
             "rank_states": [_state_json(s) for s in g.states],
             "verdict": verdict_json(g.verdict)}
            for g in analysis.groups
        ],
        "verdict": verdict_json(analysis.primary),
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


# ---------------------------------------------------------------- text


def _num(value: Optional[int]) -> str:
    return "-" if value is None else str(value)


def _ranks_range(ranks) -> str:
    ranks = sorted(ranks)
    if ranks and ranks == list(range(ranks[0], ranks[-1] + 1)) and len(ranks) > 2:
        return f"{ranks[0]}-{ranks[-1]}"
    return ", ".join(str(r) for r in ranks)


def _entry_text(entry: Entry) -> str:
    text = f"#{entry.seq} {entry.op}"
    if entry.input_sizes:
        text += f" {sizes_text(entry.input_sizes)}"
    frame = user_frame(entry.frames)
    if frame is not None:
        text += f"  at {frame}"
    return text


def _group_lines(group: GroupReport) -> List[str]:
    desc = f" ({group.desc})" if group.desc and group.desc != "undefined" else ""
    lines = [f"process group {group.group}{desc}: ranks {_ranks_range(group.ranks)}"]
    header = f"  {'rank':>4}  {'enqueued':>8}  {'started':>7}  {'completed':>9}  pending"
    lines.append(header)
    for state in group.states:
        pending = _entry_text(state.pending[0]) if state.pending else "-"
        if len(state.pending) > 1:
            pending += f" (+{len(state.pending) - 1} more)"
        lines.append(
            f"  {state.rank:>4}  {_num(state.last_enqueued):>8}  {_num(state.last_started):>7}"
            f"  {_num(state.last_completed):>9}  {pending}"
        )
    for rank in group.missing_ranks:
        lines.append(f"  {rank:>4}  {'no dump':>8}")
    verdict = group.verdict
    lines.append(f"  verdict [{verdict.kind}]: {verdict.summary}")
    if verdict.kind == MISMATCH:
        for variant in verdict.variants:
            entry = variant.entry
            dtypes = "/".join(entry.input_dtypes)
            where = f"  at {variant.frame}" if variant.frame else ""
            lines.append(
                f"    {'rank' if len(variant.ranks) == 1 else 'ranks'} "
                f"{_ranks_range(variant.ranks)}: {entry.op} in {sizes_text(entry.input_sizes)} "
                f"out {sizes_text(entry.output_sizes)} {dtypes}{where}"
            )
    if verdict.frame is not None and verdict.kind not in ("idle", "empty"):
        frame = verdict.frame
        lines.append(f"  user frame: {frame.filename}:{frame.line} in {frame.function}")
    for rank, last in verdict.behind_last:
        if last is not None:
            lines.append(f"  rank {rank} last seen in: {_entry_text(last)}")
    if verdict.static is not None:
        lines.append(f"  static analysis: {verdict.static.detail}")
        finding = verdict.static.finding
        guard = getattr(finding, "guard", None)
        if guard is not None:
            lines.append(f"    guard: {guard.location}  `{guard.text}`")
    return lines


def render_text(analysis: Analysis) -> str:
    formats = sorted({d.format for d in analysis.dumps})
    versions = sorted({d.version for d in analysis.dumps})
    header = (
        f"rankcheck fr: {len(analysis.dumps)} dump(s) ({', '.join(formats)}, dump version "
        f"{', '.join(versions)}) from ranks {_ranks_range([d.rank for d in analysis.dumps])}"
        f" of a world of {analysis.world_size}"
    )
    lines = [header]
    if analysis.missing_ranks:
        lines.append(
            f"missing dumps: {'rank' if len(analysis.missing_ranks) == 1 else 'ranks'} "
            f"{_ranks_range(analysis.missing_ranks)} left no dump (crashed, killed, or never "
            "dumped)"
        )
    for path, reason in analysis.ignored:
        lines.append(f"ignored {path}: {reason}")
    for note in analysis.notes:
        lines.append(f"note: {note}")
    for group in analysis.groups:
        lines.append("")
        lines.extend(_group_lines(group))
    primary = analysis.primary
    lines.append("")
    if primary is None:
        lines.append("verdict: no collectives recorded in these dumps")
    else:
        lines.append(f"verdict: {primary.summary}")
    return "\n".join(lines) + "\n"
