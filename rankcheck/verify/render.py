"""Text for people: the ranks' collective sequences side by side, and the verdicts."""

from __future__ import annotations

from typing import Optional, Sequence

from rankcheck.ftypes import Finding
from rankcheck.verify.verdict import UNPREDICTED, is_script
from rankcheck.verify.vtypes import (
    CLEAN,
    DIVERGED,
    ERROR,
    STOPPED,
    TIMEOUT,
    TORCH_MISSING,
    UNSUPPORTED,
    CollectiveCall,
    RankOutcome,
    RunResult,
    short_path,
)

INSTALL_HINT = (
    "rankcheck verify needs PyTorch (torch.distributed with gloo), which is not importable here.\n"
    "Install the CPU build with:  pip install torch --index-url https://download.pytorch.org/whl/cpu\n"
    "(or with rankcheck:  pip install -e '.[verify]' in a checkout; see README \"Set up and try it\")"
)
TABLE_WIDTH = 130


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "~"


def _cell(call: CollectiveCall, width: int, held: bool) -> str:
    """`op args [on group]  file:line`; the call site is never clipped, the arguments may be."""
    site = f"  {call.site}" if call.site else ""
    group = "" if call.group == "WORLD" else f" on {call.group}"
    body = ("[held] " if held else "") + f"{call.op}{group} {call.args}".strip()
    return _clip(body, max(8, width - len(site))) + site


def _end_cell(outcome: RankOutcome) -> str:
    if outcome.state == STOPPED or outcome.blocked is not None:
        return ""  # its last row is the collective it is held at
    return f"-- {outcome.ending(short=True)} --"


def side_by_side(result: RunResult) -> list[str]:
    """One row per collective number, one column per rank; the divergent row is marked."""
    ranks = list(result.ranks)
    if not ranks:
        return []
    column = max(28, (TABLE_WIDTH - 10) // len(ranks))
    held = {(o.rank, o.blocked.seq) for o in ranks if o.blocked is not None}
    if result.divergence is not None:
        held |= {(c.rank, c.seq) for c in result.divergence.entered}
    rows = max((o.collectives for o in ranks), default=0)
    header = "          " + "".join(_clip(f"rank {o.rank}", column).ljust(column) for o in ranks)
    lines = [header.rstrip()]
    ends_written = set()
    for seq in range(1, rows + 2):
        cells = []
        marked = False
        any_content = False
        for outcome in ranks:
            call = next((c for c in outcome.calls if c.seq == seq), None)
            if call is not None:
                is_held = (outcome.rank, seq) in held
                text = _cell(call, column - 2, is_held)
                marked = marked or is_held
                any_content = True
            elif outcome.rank not in ends_written and seq > outcome.collectives:
                text = _end_cell(outcome)
                ends_written.add(outcome.rank)
                any_content = any_content or bool(text)
            else:
                text = ""
            cells.append(_clip(text, column - 2).ljust(column))
        if not any_content:
            continue
        prefix = f"  #{seq:<4}" + (">> " if marked else "   ")
        lines.append((prefix + "".join(cells)).rstrip())
    return lines


def _flight_lines(result: RunResult) -> list[str]:
    parts = []
    for outcome in result.ranks:
        if outcome.flight:
            issued = [e for e in outcome.flight if e.op not in ("",)]
            last = issued[-1]
            ours = outcome.collectives - (1 if outcome.blocked is not None else 0)
            agree = "" if len(issued) == ours else f" (rankcheck saw {ours}: some ran from C++)"
            parts.append(
                f"rank {outcome.rank}: {len(issued)} issued, last {last.op} #{last.seq}{agree}"
            )
        elif outcome.flight_note:
            parts.append(f"rank {outcome.rank}: {outcome.flight_note}")
    if not parts:
        return []
    return ["flight recorder (what torch really issued): " + "; ".join(parts)]


def _failed(outcome: RankOutcome) -> bool:
    if outcome.error is not None or outcome.state == "died":
        return True
    return outcome.state == "exited" and outcome.exit_code not in (0, None)


def headline(result: RunResult) -> str:
    outcome = result.outcome
    took = f"{result.elapsed:.1f} s"
    if outcome == DIVERGED:
        assert result.divergence is not None
        return f"DIVERGED ({result.divergence.kind}, after {took}): {result.divergence.summary}"
    if outcome == CLEAN:
        calls = max((o.collectives for o in result.ranks), default=0)
        if not calls:
            return f"NOT REACHED ({took}): {nothing_ran(result)}"
        return (
            f"no divergence ({took}): all {result.nproc} ranks ran to the end and issued the same "
            f"{calls} collectives"
        )
    if outcome == TIMEOUT:
        hang = (
            " (hang: a rank left while another is blocked inside torch)"
            if (result.hang_evidence())
            else ""
        )
        where = "; ".join(f"rank {o.rank} {o.ending()}" for o in result.ranks)
        return f"TIME LIMIT ({result.timeout:g} s) reached without a verdict{hang}: {where}"
    if outcome == UNSUPPORTED:
        return f"UNSUPPORTED on gloo/CPU: {result.unsupported}"
    if outcome == TORCH_MISSING:
        return INSTALL_HINT
    if outcome == ERROR:
        return "ERROR: user code failed on " + ", ".join(
            f"rank {o.rank} ({o.ending()})" for o in result.ranks if _failed(o)
        )
    return outcome


def nothing_ran(result: RunResult) -> str:
    """Why a replay in which no rank issued a collective verifies nothing, and what to do instead."""
    path, _, function = result.target.partition("::")
    if function:
        return (f"nothing ran: {function}() issued no collective on any rank; give it arguments that reach one "
                "with --fixture module:function")
    if not is_script(path):
        return (f"nothing ran: {short_path(path)} only defines functions and classes; name an entry point with "
                "path.py::func and --fixture")
    return ("nothing ran: no rank issued a collective; name an entry point with path.py::func and --fixture, or "
            "pass the script the arguments that reach one after --")


def render_result(
    result: RunResult,
    findings: Sequence[Finding] = (),
    *,
    static_note: str = "",
    show_output: bool = False,
) -> str:
    out: list[str] = []
    if result.notes:
        out.append("substituted for the CPU replay: " + "; ".join(result.notes))
    out.append(headline(result))
    if result.ranks and any(o.calls for o in result.ranks):
        out.append("")
        out.extend(side_by_side(result))
    flight = _flight_lines(result)
    if flight:
        out.append("")
        out.extend(flight)
    for outcome in result.ranks:
        if outcome.error is not None:
            out.append("")
            out.append(f"rank {outcome.rank} raised:")
            out.extend("  " + line for line in outcome.error.text.splitlines())
    if result.timed_out:
        for outcome in result.ranks:
            if outcome.stack:
                out.append("")
                inside = " (blocked inside torch)" if outcome.stack_in_torch else ""
                out.append(f"rank {outcome.rank} at the time limit{inside}:")
                for frame in outcome.stack[:8]:
                    out.append(f"  {frame} in {frame.function}()")
    if static_note:
        out.append("")
        out.append(static_note)
    if findings:
        out.append("")
        out.append("findings:")
        for finding in findings:
            out.extend(finding_lines(finding))
    silent_death = any(_failed(o) and o.error is None for o in result.ranks)
    if show_output or (result.outcome == ERROR and silent_death):
        for outcome in result.ranks:
            text = outcome.output.strip()
            if text:
                out.append("")
                out.append(f"---- rank {outcome.rank} output (tail) ----")
                out.extend(text.splitlines()[-40:])
    return "\n".join(out) + "\n"


def finding_lines(finding: Finding) -> list[str]:
    loc = finding.location
    verdict = f" [{finding.verdict}]" if finding.verdict else ""
    lines = [f"{loc.path}:{loc.line}:{loc.column}: {finding.code}{verdict} {finding.message}"]
    if finding.verdict == UNPREDICTED:
        return lines  # its detail is the divergence's sentence, which the headline has printed
    for detail in (finding.verdict_detail or "").splitlines():
        lines.append(f"    {detail}")
    return lines


def verdict_counts(findings: Sequence[Finding]) -> Optional[str]:
    counts: dict[str, int] = {}
    for finding in findings:
        if finding.verdict:
            counts[finding.verdict] = counts.get(finding.verdict, 0) + 1
    if not counts:
        return None
    return ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))
