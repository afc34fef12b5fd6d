"""The verdict: which rank diverged from the others, at which collective, and where in the code.

Per process group, every rank's collectives are lined up by sequence number (torch numbers the
collectives of a group 1, 2, 3, ... on every rank). The first sequence number at which the ranks
disagree decides:

- mismatch: ranks recorded different ops, shapes or dtypes for the same number;
- behind / ahead / split: some ranks entered number N and the others never did. The smaller side
  is named: a minority that never entered is *behind*, a minority that entered is *ahead* (into an
  extra collective), and with equal sides (two ranks) both readings are given as *split*;
- missing: the ranks that left dumps agree, but a rank of the group left none (a crash is evidence);
- stalled: every rank entered the same last collective and none completed it;
- idle: every rank completed the same last collective and none entered another. The dumps show no
  collective problem; if the job hung, it hung on the host after that collective (exit code 0);
- empty: the group has no recorded collectives.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from rankcheck.fr.frames import user_frame
from rankcheck.fr.model import Entry, Frame, RankDump
from rankcheck.fr.reader import DEFAULT_GROUP_DESC

if TYPE_CHECKING:
    from rankcheck.ftypes import Finding

MISMATCH, BEHIND, AHEAD, SPLIT = "mismatch", "behind", "ahead", "split"
MISSING, STALLED, IDLE, EMPTY = "missing", "stalled", "idle", "empty"
# Most telling first: the primary verdict of a run is the first kind found in this order.
SEVERITY = (MISMATCH, BEHIND, AHEAD, SPLIT, MISSING, STALLED, IDLE, EMPTY)
HANG_KINDS = frozenset({MISMATCH, BEHIND, AHEAD, SPLIT, MISSING, STALLED})


@dataclass(frozen=True)
class StaticCheck:
    """What rankcheck's static analysis said about the divergent line (filled by crossref)."""

    status: str  # "flagged" | "missed" | "not-found" | "no-frame" | "error"
    detail: str
    frame: Optional[Frame] = None  # the frame that matched (or the user frame looked at)
    local_path: str = ""
    finding: Optional[Finding] = None  # when flagged


@dataclass(frozen=True)
class RankState:
    rank: int
    last_enqueued: Optional[int]  # None: never
    last_started: Optional[int]  # None: never or not tracked (gloo)
    last_completed: Optional[int]
    first_recorded: Optional[int]  # oldest sequence number still in the ring buffer
    pending: Tuple[Entry, ...]  # recorded, not completed
    last_entry: Optional[Entry]  # the entry of last_enqueued, when still recorded


@dataclass(frozen=True)
class Variant:
    """For a mismatch: the ranks that recorded one and the same signature."""

    ranks: Tuple[int, ...]
    entry: Entry
    frame: Optional[Frame]


@dataclass(frozen=True)
class Verdict:
    kind: str
    group: str
    summary: str
    seq: Optional[int] = None
    op: str = ""
    ahead_ranks: Tuple[int, ...] = ()
    behind_ranks: Tuple[int, ...] = ()
    missing_ranks: Tuple[int, ...] = ()
    mismatch_field: str = ""  # "op" | "shape" | "dtype"
    variants: Tuple[Variant, ...] = ()
    entry: Optional[Entry] = None  # the divergent entry
    entry_rank: Optional[int] = None  # a rank that recorded it
    frame: Optional[Frame] = None  # its user-code frame
    behind_last: Tuple[Tuple[int, Optional[Entry]], ...] = ()  # where behind ranks were last seen
    static: Optional[StaticCheck] = None

    @property
    def is_hang(self) -> bool:
        return self.kind in HANG_KINDS


@dataclass(frozen=True)
class GroupReport:
    group: str
    desc: str
    ranks: Tuple[int, ...]
    missing_ranks: Tuple[int, ...]
    states: Tuple[RankState, ...]
    verdict: Verdict


@dataclass(frozen=True)
class Analysis:
    dumps: Tuple[RankDump, ...]
    world_size: int
    missing_ranks: Tuple[int, ...]
    groups: Tuple[GroupReport, ...]
    ignored: Tuple[Tuple[str, str], ...] = ()
    notes: Tuple[str, ...] = field(default=())

    @property
    def primary(self) -> Optional[Verdict]:
        verdicts = [g.verdict for g in self.groups]
        for kind in SEVERITY:
            for verdict in verdicts:
                if verdict.kind == kind:
                    return verdict
        return None

    @property
    def exit_code(self) -> int:
        return 1 if any(g.verdict.is_hang for g in self.groups) or self.missing_ranks else 0


def ranks_text(ranks: Sequence[int]) -> str:
    ranks = sorted(ranks)
    word = "rank" if len(ranks) == 1 else "ranks"
    return f"{word} {', '.join(str(r) for r in ranks)}"


def _agree(ranks: Sequence[int], one: str, many: str) -> str:
    """`rank 1 is` / `ranks 0, 2 are`: the verb that goes with ranks_text(ranks)."""
    return f"{ranks_text(ranks)} {one if len(ranks) == 1 else many}"


def sizes_text(sizes: tuple) -> str:
    return "[" + ", ".join("[" + ", ".join(str(d) for d in arg) + "]" for arg in sizes) + "]"


def _is_completed(entry: Entry) -> bool:
    if entry.state == "completed":
        return True
    # Gloo has no completion events: torch marks its finished work only as retired.
    return entry.retired and entry.profiling_name.startswith("gloo:")


def _collectives(dump: RankDump, group: str) -> Dict[int, Tuple[Entry, ...]]:
    by_seq: Dict[int, List[Entry]] = defaultdict(list)
    for entry in dump.entries:
        if entry.group == group and not entry.is_p2p and entry.seq > 0:
            by_seq[entry.seq].append(entry)
    return {seq: tuple(entries) for seq, entries in by_seq.items()}


def _rank_state(dump: RankDump, group: str, by_seq: Dict[int, Tuple[Entry, ...]]) -> RankState:
    status = dump.status.get(group)
    recorded_max = max(by_seq) if by_seq else 0
    if status is not None:
        enqueued = max(status.last_enqueued, recorded_max)
        completed = status.last_completed
        started = status.last_started
    else:
        enqueued = recorded_max
        done = [seq for seq, entries in by_seq.items() if all(_is_completed(e) for e in entries)]
        completed = max(done) if done else -1
        started_seqs = [s for s, es in by_seq.items() if any(e.state == "started" for e in es)]
        started = max(started_seqs + [completed]) if (started_seqs or completed > 0) else -1
    pending = tuple(e for seq in sorted(by_seq) if seq > completed for e in by_seq[seq])
    last = by_seq.get(enqueued)
    return RankState(
        rank=dump.rank,
        last_enqueued=enqueued if enqueued > 0 else None,
        last_started=started if started > 0 else None,
        last_completed=completed if completed > 0 else None,
        first_recorded=min(by_seq) if by_seq else None,
        pending=pending,
        last_entry=last[-1] if last else None,
    )


def _first_frame(entries: Sequence[Entry], source_root: Optional[str]) -> Optional[Frame]:
    for entry in entries:
        frame = user_frame(entry.frames, source_root)
        if frame is not None:
            return frame
    return None


def _describe_entry(seq: Optional[int], entry: Optional[Entry]) -> str:
    if seq is None:
        return "none"
    return f"#{seq} {entry.op}" if entry is not None else f"#{seq}"


def _signature_field(a: Entry, b: Entry) -> str:
    if a.op != b.op:
        return "op"
    if (a.input_sizes, a.output_sizes) != (b.input_sizes, b.output_sizes):
        return "shape"
    return "dtype"


def _mismatch_verdict(group, seq, recorded, source_root) -> Optional[Verdict]:
    by_signature: Dict[tuple, List[int]] = defaultdict(list)
    entry_of: Dict[tuple, Entry] = {}
    entries_of: Dict[tuple, List[Entry]] = defaultdict(list)
    for rank, entries in sorted(recorded.items()):
        signature = tuple(e.signature() for e in entries)
        by_signature[signature].append(rank)
        entry_of.setdefault(signature, entries[0])
        entries_of[signature].extend(entries)
    if len(by_signature) < 2:
        return None
    # Most ranks first; the odd ones out after it (ties keep rank order).
    ordered = sorted(by_signature, key=lambda s: (-len(by_signature[s]), min(by_signature[s])))
    variants = tuple(
        Variant(tuple(by_signature[s]), entry_of[s], _first_frame(entries_of[s], source_root))
        for s in ordered
    )
    majority = variants[0] if len(variants[0].ranks) > len(variants[1].ranks) else None
    field_name = _signature_field(variants[0].entry, variants[1].entry)

    def value(variant: Variant) -> str:
        if field_name == "op":
            return variant.entry.op
        if field_name == "shape":
            return sizes_text(variant.entry.input_sizes)
        return "/".join(variant.entry.input_dtypes) or "no dtype"

    verb = "entered" if field_name == "op" else "passed"
    subject = f"collective #{seq}" if field_name == "op" else f"collective #{seq} {variants[0].entry.op}"
    if majority is not None:
        odd = variants[1:]
        culprit = odd[0]
        summary = (
            f"ranks disagree at {subject}: "
            + " and ".join(f"{ranks_text(v.ranks)} {verb} {value(v)}" for v in odd)
            + f", where {ranks_text(majority.ranks)} {verb} {value(majority)}"
        )
    else:
        culprit = variants[-1]
        summary = f"ranks disagree at {subject}: " + "; ".join(
            f"{ranks_text(v.ranks)} {verb} {value(v)}" for v in variants
        )
    summary += {
        "op": " (an op mismatch: one side runs a collective the other does not)",
        "shape": " (a shape mismatch)",
        "dtype": " (a dtype mismatch)",
    }[field_name]
    return Verdict(
        kind=MISMATCH,
        group=group,
        summary=summary,
        seq=seq,
        op=culprit.entry.op,
        ahead_ranks=(),
        behind_ranks=(),
        mismatch_field=field_name,
        variants=variants,
        entry=culprit.entry,
        entry_rank=culprit.ranks[0],
        frame=culprit.frame,
    )


def _divergence_verdict(group, seq, entered, not_entered, collectives, states, source_root):
    entering_entries = [e for r in sorted(entered) for e in collectives[r].get(seq, ())]
    entry = entering_entries[0] if entering_entries else None
    entry_rank = next((r for r in sorted(entered) if collectives[r].get(seq)), None)
    frame = _first_frame(entering_entries, source_root)
    op = entry.op if entry is not None else "?"
    where = f" at {frame}" if frame else ""
    behind_last = tuple((r, states[r].last_entry) for r in sorted(not_entered))
    seen: Dict[str, List[int]] = defaultdict(list)
    for r, last_entry in behind_last:
        state = states[r]
        text = _describe_entry(state.last_enqueued, last_entry)
        if state.last_enqueued is not None and state.last_completed == state.last_enqueued:
            text += " (completed)"
        seen[text].append(r)
    last_seen = "; ".join(
        f"last collective of {ranks_text(ranks)}: {text}" for text, ranks in seen.items()
    )
    if len(not_entered) < len(entered):
        kind = BEHIND
        summary = (
            f"{_agree(not_entered, 'is', 'are')} behind: never entered collective #{seq} {op}, "
            f"which {ranks_text(entered)} entered{where} and {'is' if len(entered) == 1 else 'are'}"
            f" waiting in; {last_seen}"
        )
    elif len(entered) < len(not_entered):
        kind = AHEAD
        summary = (
            f"{ranks_text(entered)} ran ahead into an extra collective: #{seq} {op}{where}, "
            f"which {ranks_text(not_entered)} never entered; {last_seen}"
        )
    else:
        kind = SPLIT
        summary = (
            f"{ranks_text(entered)} entered collective #{seq} {op}{where}; "
            f"{ranks_text(not_entered)} never entered it ({last_seen}). Either "
            f"{_agree(not_entered, 'is', 'are')} behind, or "
            f"{ranks_text(entered)} ran ahead into an extra {op}"
        )
    return Verdict(
        kind=kind,
        group=group,
        summary=summary,
        seq=seq,
        op=op,
        ahead_ranks=tuple(sorted(entered)),
        behind_ranks=tuple(sorted(not_entered)),
        entry=entry,
        entry_rank=entry_rank,
        frame=frame,
        behind_last=behind_last,
    )


def analyze_group(
    group: str,
    desc: str,
    members: Sequence[int],
    dumps: Dict[int, RankDump],
    source_root: Optional[str] = None,
) -> GroupReport:
    present = [r for r in members if r in dumps]
    missing = tuple(r for r in members if r not in dumps)
    collectives = {r: _collectives(dumps[r], group) for r in present}
    states = {r: _rank_state(dumps[r], group, collectives[r]) for r in present}

    def report(verdict: Verdict) -> GroupReport:
        return GroupReport(
            group=group,
            desc=desc,
            ranks=tuple(members),
            missing_ranks=missing,
            states=tuple(states[r] for r in present),
            verdict=replace(verdict, missing_ranks=missing),
        )

    enqueued = {r: states[r].last_enqueued or 0 for r in present}
    top = max(enqueued.values(), default=0)
    if top == 0:
        return report(Verdict(kind=EMPTY, group=group, summary="no collectives recorded"))
    lowest = min((min(c) for c in collectives.values() if c), default=1)
    for seq in range(lowest, top + 1):
        recorded = {r: collectives[r][seq] for r in present if seq in collectives[r]}
        mismatch = _mismatch_verdict(group, seq, recorded, source_root)
        if mismatch is not None:
            return report(mismatch)
        entered = [r for r in present if enqueued[r] >= seq]
        not_entered = [r for r in present if enqueued[r] < seq]
        if not_entered:
            return report(
                _divergence_verdict(group, seq, entered, not_entered, collectives, states,
                                    source_root)
            )
    last_entries = [e for r in present for e in collectives[r].get(top, ())]
    entry = last_entries[0] if last_entries else None
    frame = _first_frame(last_entries, source_root)
    op = entry.op if entry is not None else "?"
    where = f" at {frame}" if frame else ""
    waiting = [r for r in present if (states[r].last_completed or 0) < top]
    # A collective that completed on one rank was entered by every rank; the others' recorders
    # may simply not have noticed yet (gloo and the NCCL watchdog discover completion
    # asynchronously, so a dump taken right after can lag).
    lagging = waiting if len(waiting) < len(present) else []
    all_done = not waiting or bool(lagging)
    common: Dict[str, Any] = {"group": group, "seq": top, "op": op, "entry": entry, "frame": frame,
              "entry_rank": present[0] if present else None}
    if missing:
        if all_done:
            state = f"{_agree(present, 'has', 'have')} finished it"
        else:
            state = f"{_agree(waiting, 'is', 'are')} still waiting in it"
        summary = (
            f"{_agree(missing, 'left', 'left')} no dump (crashed, killed, or never dumped), and "
            f"a missing rank is evidence: {_agree(present, 'agrees', 'agree')} up to collective "
            f"#{top} {op}{where}; {state}, and whether {ranks_text(missing)} entered it is "
            "unknown"
        )
        if all_done:
            summary += " (gloo also counts a collective that failed because a peer vanished)"
        return report(Verdict(kind=MISSING, summary=summary, **common))
    if not all_done:
        summary = (
            f"all ranks entered collective #{top} {op}{where} with matching arguments and "
            f"{_agree(waiting, 'has', 'have')} not completed it: "
            "every rank is waiting on the same collective, a stall rather than a mismatch "
            "(look at the host side or the transport)"
        )
        return report(Verdict(kind=STALLED, summary=summary, **common))
    summary = (
        f"no divergence: every rank completed collective #{top} {op}{where} and none entered "
        "another; if the job hung, it hung on the host after that point (a host-side stall)"
    )
    if lagging:
        summary += (
            f" ({ranks_text(lagging)}: not yet marked completed by the recorder, but the "
            "collective completed on the other ranks, which needs every rank in it)"
        )
    return report(Verdict(kind=IDLE, summary=summary, **common))


def _world_size(dumps: Sequence[RankDump], declared: Optional[int]) -> int:
    biggest = max((d.rank for d in dumps), default=-1)
    for dump in dumps:
        biggest = max([biggest] + list(dump.config_ranks))
    world = biggest + 1
    return max(world, declared or 0)


def _groups(dumps: Sequence[RankDump], world: int) -> List[Tuple[str, str, Tuple[int, ...]]]:
    """(name, desc, member ranks) of every group any dump mentions; the default group first."""
    descs: Dict[str, str] = {}
    members: Dict[str, set] = defaultdict(set)
    configured: Dict[str, Tuple[int, ...]] = {}
    for dump in dumps:
        for entry in dump.entries:
            if not entry.is_p2p:
                descs.setdefault(entry.group, entry.group_desc)
                if entry.group_desc and descs[entry.group] in ("", "undefined"):
                    descs[entry.group] = entry.group_desc
                members[entry.group].add(dump.rank)
        for name in dump.status:
            members[name].add(dump.rank)
            descs.setdefault(name, "")
        for name, ranks in dump.group_ranks.items():
            if name in descs or name in members:
                configured[name] = ranks
    result = []
    for name, desc in descs.items():
        if desc == DEFAULT_GROUP_DESC:
            ranks = tuple(range(world))
        elif name in configured and set(members[name]) <= set(configured[name]):
            ranks = tuple(sorted(configured[name]))
        else:
            ranks = tuple(sorted(members[name]))
        result.append((name, desc, ranks))
    result.sort(key=lambda g: (g[1] != DEFAULT_GROUP_DESC, len(g[0]), g[0]))
    return result


def analyze(
    dumps: Sequence[RankDump],
    *,
    world_size: Optional[int] = None,
    source_root: Optional[str] = None,
    ignored: Sequence[Tuple[str, str]] = (),
) -> Analysis:
    by_rank = {d.rank: d for d in dumps}
    world = _world_size(dumps, world_size)
    missing = tuple(r for r in range(world) if r not in by_rank)
    groups = tuple(
        analyze_group(name, desc, ranks, by_rank, source_root)
        for name, desc, ranks in _groups(dumps, world)
    )
    notes = []
    if dumps and not any(d.has_stacks for d in dumps):
        if all(d.format == "json" for d in dumps):
            notes.append(
                "no stacks: torch's JSON dumps never record them; use the pickle dump "
                "(torch._C._distributed_c10d._dump_fr_trace() or the TORCH_FR_DUMP_TEMP_FILE "
                "file) to get the user-code line"
            )
        else:
            notes.append("no stacks were recorded in these dumps (includeStackTraces=False?)")
    versions = sorted({d.version for d in dumps})
    if len(versions) > 1:
        notes.append(f"the dumps have different versions ({', '.join(versions)})")
    return Analysis(
        dumps=tuple(dumps),
        world_size=world,
        missing_ranks=missing,
        groups=groups,
        ignored=tuple(ignored),
        notes=tuple(notes),
    )


def with_static(analysis: Analysis, checks: Dict[Tuple[str, int], StaticCheck]) -> Analysis:
    """A copy whose verdicts carry the static-analysis cross-reference, keyed by (group, seq)."""
    groups = tuple(
        replace(g, verdict=replace(g.verdict, static=checks.get((g.group, g.verdict.seq or 0))))
        for g in analysis.groups
    )
    return replace(analysis, groups=groups)
