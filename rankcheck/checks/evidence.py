"""Shared wording of evidence: guards, rank sources, chains (every rule reports the same way)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

from rankcheck.ftypes import (
    ASSIGNED_PAST,
    ASSIGNED_UNDER,
    ERROR,
    PER_RANK_DATA,
    SKIPPED_UNDER,
    WARNING,
    ChainStep,
    Guard,
    Location,
    RankSequence,
    RankSource,
    SequenceStep,
)
from rankcheck.interp.tree import ExitKind, GuardRef
from rankcheck.interp.values import Taint
from rankcheck.program.ir import GuardKeyword
from rankcheck.sequences.compare import Cause, Divergence
from rankcheck.sequences.flatten import Event, EventKind


def condition_phrase(guard: GuardRef, arm: bool) -> str:
    if guard.is_loop:
        return f"`{guard.condition}` holds"
    if guard.keyword is GuardKeyword.EXCEPT:
        return f"`{guard.head}` catches what they raised"
    return f"`{guard.condition}` is {'true' if guard.holds(arm) else 'false'}"


def source_of(taint: Optional[Taint]) -> Optional[RankSource]:
    return RankSource(taint.text, taint.location, taint.via) if taint is not None else None


def guard_evidence(guard: GuardRef) -> Guard:
    # A framework call's own loop has no source line of its own: the message says what decides it.
    source = None if guard.keyword is GuardKeyword.CALL else source_of(guard.taint)
    return Guard(location=guard.location, text=guard.head, condition=guard.condition, kind=guard.kind, source=source)


def cascade_of(taint: Optional[Taint]) -> Optional[Location]:
    """The rank guard a finding resting on `taint` repeats: where a value was assigned
    differently per rank under that guard (its own finding, when reported, says it all)."""
    return taint.location if taint is not None and taint.control else None


def severity_for(kind: str, default: str = ERROR) -> str:
    """Per-rank data (a local loss, a local batch) may agree on every rank in a given run; the rank
    itself never does. Findings that rest on data are warnings."""
    return WARNING if kind == PER_RANK_DATA else default


def why(taint: Optional[Taint], kind: str, reported_in: str) -> str:
    """Where the rank or the data comes from, said from the file the finding is reported in: a
    source in another module (a helper's `torch.randint()`) is named with its path."""
    what = "per-rank data" if kind == PER_RANK_DATA else "the rank"
    if taint is None:
        return what
    where = f"line {taint.location.line}" if taint.location.path == reported_in else f"{taint.location.path}:{taint.location.line}"
    if taint.control and taint.text.startswith(ASSIGNED_UNDER):
        # The value differs because a branch on the rank assigned it: name that branch.
        return f"{what} through the assignment under {taint.text[len(ASSIGNED_UNDER):]} at {where}"
    if taint.control and taint.text.startswith(ASSIGNED_PAST):
        return f"{what} through the assignment past the return under {taint.text[len(ASSIGNED_PAST):]} at {where}"
    if taint.control and taint.text.startswith(SKIPPED_UNDER):
        return f"{what} through the {taint.text} at {where}"
    return f"{what} from `{taint.text}` at {where}"


def describe_chain(chain: Tuple[ChainStep, ...]) -> Tuple[str, str]:
    """(what is called at the reported site, the real collective at the end) as `code`."""
    first = chain[0].callee if chain else "a collective"
    last = chain[-1].callee if chain else "a collective"
    return f"`{first}`", f"`{last}`"


def reaches_through(chain: Tuple[ChainStep, ...]) -> bool:
    """The reported call is not the collective itself: it reaches one further down."""
    return len(chain) > 1


MAX_SEQUENCE_STEPS = 40  # a report draws the first steps; a long loop nest says the rest in one


def sequence_evidence(div: Divergence) -> Tuple[RankSequence, ...]:
    """The two classes of ranks the comparison set side by side, the one that issues the
    divergent event first, each with the first step where it parts from the other."""
    if len(div.runs) != 2:
        return ()
    drawn_runs = [_drawn(run) for run in div.runs]
    first, second = (0, 1) if id(div.event) in drawn_runs[0][1] or id(div.event) not in drawn_runs[1][1] else (1, 0)
    arm = (not div.arm) if div.cause is Cause.EXIT else div.arm
    labels = (_ranks_phrase(div.guard, arm), _ranks_phrase(div.guard, not arm))
    drawn = [drawn_runs[first][0], drawn_runs[second][0]]
    compared = [[(step.depth, step.text) for step in steps if not _is_exit(step)] for steps in drawn]
    part = next((i for i, (a, b) in enumerate(zip(*compared)) if a != b), min(len(compared[0]), len(compared[1])))
    return tuple(RankSequence(ranks=label, steps=tuple(steps), diverges_at=_position(steps, part)) for label, steps in zip(labels, drawn))


# A function's divergences share their two runs (a deep loop nest gives thousands of them): each
# run is drawn, and the events it holds listed, once. Keyed by id, the run kept beside it.
_DRAWN: Dict[int, Tuple[Any, List[SequenceStep], Set[int]]] = {}
MAX_DRAWN = 256


def _drawn(run: Any) -> Tuple[List[SequenceStep], Set[int]]:
    cached = _DRAWN.get(id(run))
    if cached is None or cached[0] is not run:
        if len(_DRAWN) >= MAX_DRAWN:
            _DRAWN.clear()
        held: Set[int] = set()
        _collect_ids(run.events, held, set())
        cached = _DRAWN[id(run)] = (run, _steps(run.events), held)
    return cached[1], cached[2]


def _collect_ids(events: List[Event], held: Set[int], seen: Set[int]) -> None:
    """The ids of the events in `events` and below. A loop's two iterations share their event
    lists, so each list is walked once: walked naively, 19 nested loops are 2^19 events."""
    for event in events:
        held.add(id(event))
        for child in event.children:
            if id(child) not in seen:
                seen.add(id(child))
                _collect_ids(child, held, seen)


EXIT_TEXTS = tuple(kind.value for kind in ExitKind)


def _is_exit(step: SequenceStep) -> bool:
    return step.text in EXIT_TEXTS


def _position(steps: List[SequenceStep], part: int) -> int:
    """The index among `steps` of the `part`-th compared step, or of the exit just before it."""
    seen = 0
    for index, step in enumerate(steps):
        if _is_exit(step):
            continue
        if seen == part:
            return index - 1 if index and _is_exit(steps[index - 1]) else index
        seen += 1
    return len(steps) - 1 if steps and _is_exit(steps[-1]) else len(steps)


def _ranks_phrase(guard: GuardRef, arm: bool) -> str:
    if guard.is_loop:
        return f"ranks where `{guard.condition}` {'holds' if arm else 'does not hold'}"
    return f"ranks where {condition_phrase(guard, arm)}"


def _steps(events: List[Event], depth: int = 0, out: Optional[List[SequenceStep]] = None,
           drawn: Optional[Set[int]] = None) -> List[SequenceStep]:
    """Events as drawn steps: a loop or a uniform branch, then what it holds one level deeper. An
    exit taken inside a loop also follows the loop (flatten: where the sequence ends); it is
    drawn once, where it was taken."""
    out = [] if out is None else out
    drawn = set() if drawn is None else drawn
    for event in events:
        if len(out) >= MAX_SEQUENCE_STEPS:
            break
        if event.kind is EventKind.EXIT:
            if id(event) in drawn:
                continue
            drawn.add(id(event))
            out.append(SequenceStep(event.exit_kind.value if event.exit_kind else "exit", _where(event), depth))
        elif event.kind is EventKind.COLLECTIVE:
            group = f" ({event.group})" if event.group and event.group != "WORLD" else ""
            out.append(SequenceStep(event.op + group, _where(event), depth))
        elif event.kind is EventKind.LOOP:
            body = event.children[0] if event.children else []
            half = len(body) // 2
            repeats = len(body) % 2 == 0 and [e.key for e in body[:half]] == [e.key for e in body[half:]]
            out.append(SequenceStep("loop (each iteration)" if repeats else "loop (two iterations)", None, depth))
            _steps(body[:half] if repeats else body, depth + 1, out, drawn)
        else:
            out.append(SequenceStep("branch (alike on every rank)", None, depth))
            _steps(event.children[0] if event.children else [], depth + 1, out, drawn)
    return out
def _where(event: Event) -> Optional[Location]:
    if event.site is not None:
        return event.site.location
    return event.chain[0].location if event.chain else None


def skipped_after(event: Event, exit_event: Event) -> Tuple[Tuple[ChainStep, ...], int]:
    """The way from an exit to the collective it skips, and the line where that way starts: an
    exit in a called function (under data its caller passed in) skips what follows it there, not
    the caller's call."""
    prefix = exit_event.chain
    if prefix and event.chain[: len(prefix)] == prefix and len(event.chain) > len(prefix):
        rest = event.chain[len(prefix):]
        return rest, rest[0].location.line
    assert event.site is not None
    return event.chain, event.site.location.line
