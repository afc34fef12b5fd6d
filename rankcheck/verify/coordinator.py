"""The verifier's view of all ranks at once, and the rule that says "diverged".

Every rank reports each collective before it runs it, and how it ended. A collective is released
("go") when every member of its group has arrived with the same fingerprint. It is a divergence
as soon as the outcome is certain, never after a timeout:
- mismatch: two members arrived at the same position of a group with different fingerprints
  (another op, other shapes or dtypes, another root);
- missing: a member has left (finished, exited, raised, died) without arriving;
- deadlock: a member is held at another collective that itself waits for a rank held here.

Pure state, no sockets or processes: the launcher feeds it messages and acts on its answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from rankcheck.verify.vtypes import (
    DIED,
    KILLED,
    NO_TORCH,
    AbsentRank,
    CollectiveCall,
    Divergence,
    Frame,
    LineHit,
    RankError,
    RankOutcome,
)

TERMINAL = ("finished", "exited", "raised", "died", "stopped", NO_TORCH)


def _frames(raw) -> tuple[Frame, ...]:
    return tuple(Frame(str(p), int(line), str(fn)) for p, line, fn in (raw or ()))


def call_from_message(message: dict) -> CollectiveCall:
    return CollectiveCall(
        rank=int(message["rank"]),
        seq=int(message["seq"]),
        op=str(message["op"]),
        group=str(message["group"]),
        group_key=str(message["group_key"]),
        group_seq=int(message["group_seq"]),
        members=tuple(int(m) for m in message["members"]),
        signature=str(message["signature"]),
        args=str(message.get("args", "")),
        stack=_frames(message.get("stack")),
    )


@dataclass
class RankState:
    rank: int
    state: str = "running"
    exit_code: Optional[int] = None
    calls: list = field(default_factory=list)
    waiting: Optional[CollectiveCall] = None
    blocked: Optional[CollectiveCall] = None
    group_counts: dict = field(default_factory=dict)
    lines: list = field(default_factory=list)
    error: Optional[RankError] = None
    site: Optional[Frame] = None
    flight: list = field(default_factory=list)
    flight_note: str = ""
    notes: list = field(default_factory=list)
    gpu_only: bool = False
    no_torch: str = ""
    stack: tuple = ()
    stack_in_torch: bool = False

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL

    def outcome(self, output: str = "") -> RankOutcome:
        hits = tuple(
            LineHit(str(p), int(line), int(count), int(first), int(last))
            for p, line, count, first, last in self.lines
        )
        return RankOutcome(
            rank=self.rank,
            state=self.state if self.state != "running" else KILLED,
            exit_code=self.exit_code,
            calls=tuple(self.calls),
            blocked=self.blocked,
            error=self.error,
            exit_site=self.site,
            line_hits=hits,
            flight=tuple(_flight(e) for e in self.flight),
            flight_note=self.flight_note,
            stack=self.stack,
            stack_in_torch=self.stack_in_torch,
            notes=tuple(self.notes),
            output=output,
        )


def _flight(entry):
    from rankcheck.verify.vtypes import FlightEntry

    seq, op, state, group, sizes = entry
    return FlightEntry(int(seq), str(op), str(state), str(group), str(sizes))


class Coordinator:
    def __init__(self, nproc: int) -> None:
        self.ranks = {r: RankState(r) for r in range(nproc)}
        self.slots: dict[tuple[str, int], dict[int, CollectiveCall]] = {}
        self.divergence: Optional[Divergence] = None

    # ---- messages from the ranks -------------------------------------------------------------
    def enter(self, message: dict) -> None:
        call = call_from_message(message)
        state = self.ranks[call.rank]
        state.calls.append(call)
        state.group_counts[call.group_key] = call.group_seq
        state.waiting = call
        state.lines = message.get("lines") or state.lines
        self.slots.setdefault((call.group_key, call.group_seq), {})[call.rank] = call

    def note(self, rank: int, text: str) -> None:
        notes = self.ranks[rank].notes
        if text not in notes:
            notes.append(text)

    def done(self, message: dict) -> None:
        state = self.ranks[int(message["rank"])]
        state.state = str(message["state"])
        state.exit_code = message.get("exit_code", 0)
        state.waiting = None
        if message.get("lines") is not None:
            state.lines = message["lines"]
        if message.get("site"):
            state.site = _frames([message["site"]])[0]
        error = message.get("error")
        if error:
            state.error = RankError(
                type=str(error["type"]),
                message=str(error["message"]),
                frames=_frames(error.get("frames")),
                text=str(error["text"]),
            )
            state.gpu_only = bool(error.get("gpu_only"))
        if state.state == NO_TORCH:
            state.no_torch = str(message.get("message", ""))
        state.flight = message.get("flight") or state.flight
        state.flight_note = message.get("flight_note", state.flight_note)
        for text in message.get("notes") or ():
            self.note(state.rank, text)

    def stopped(self, message: dict) -> None:
        state = self.ranks[int(message["rank"])]
        state.state = "stopped"
        state.blocked = state.waiting
        state.waiting = None
        if message.get("lines") is not None:
            state.lines = message["lines"]
        state.flight = message.get("flight") or state.flight
        state.flight_note = message.get("flight_note", state.flight_note)

    def died(self, rank: int, exit_code: Optional[int]) -> None:
        state = self.ranks[rank]
        if not state.terminal:
            state.state = DIED
            state.exit_code = exit_code
            state.waiting = None

    # ---- the rule --------------------------------------------------------------------------
    def evaluate(self) -> list[int]:
        """Ranks to release now. Sets `self.divergence` (and releases nobody) on a divergence."""
        released: list[int] = []
        for slot, present in list(self.slots.items()):
            calls = sorted(present.values(), key=lambda c: c.rank)
            if len({c.signature for c in calls}) > 1:
                self.divergence = self._diverged("mismatch", calls, ())
                return []
            members = calls[0].members
            absent = [m for m in members if m not in present and m in self.ranks]
            if not absent:
                del self.slots[slot]
                for call in calls:
                    self.ranks[call.rank].waiting = None
                    released.append(call.rank)
                continue
            reasons = []
            for member in absent:
                state = self.ranks[member]
                if state.terminal:
                    reasons.append(AbsentRank(member, self._ending(state)))
                elif state.waiting is not None and self._held_by(state.waiting, present):
                    waiting = state.waiting
                    reasons.append(
                        AbsentRank(member, f"was waiting in {_where(waiting)}", blocked=waiting)
                    )
                else:
                    reasons = []
                    break  # this member may still arrive
            if reasons:
                kind = "deadlock" if any(r.blocked for r in reasons) else "missing"
                self.divergence = self._diverged(kind, calls, tuple(reasons))
                return []
        return released

    def _held_by(self, waiting: CollectiveCall, present: dict[int, CollectiveCall]) -> bool:
        """`waiting` needs a rank that is held in this slot and has not reached `waiting`."""
        for rank in present:
            if rank in waiting.members:
                if self.ranks[rank].group_counts.get(waiting.group_key, 0) < waiting.group_seq:
                    return True
        return False

    def _ending(self, state: RankState) -> str:
        return state.outcome().ending()

    def _diverged(self, kind: str, calls: list, absent: tuple) -> Divergence:
        first = calls[0]
        return Divergence(
            kind=kind,
            group=first.group,
            group_seq=first.group_seq,
            entered=tuple(calls),
            absent=absent,
            summary=summarize(kind, calls, absent),
        )

    def all_terminal(self) -> bool:
        return all(s.terminal for s in self.ranks.values())

    def rendezvous_broken(self) -> list[int]:
        """The ranks that ended inside init_process_group's rendezvous (after the checkpoint that
        all ranks passed, before the one after it) when every rank still running is inside it
        too: the process group can never form, and the others would wait in the store until
        torch's init timeout (30 minutes by default). A port already in use does this. Empty
        when that is not the case."""

        def inits(state: RankState) -> int:
            return sum(1 for call in state.calls if call.op == "init_process_group")

        running = [s for s in self.ranks.values() if not s.terminal]
        ended = [s.rank for s in self.ranks.values() if s.terminal and inits(s) == 1]
        if ended and running and all(inits(s) == 1 and s.waiting is None for s in running):
            return ended
        return []

    def waiting_ranks(self) -> list[int]:
        return [r for r, s in self.ranks.items() if s.waiting is not None and not s.terminal]


def _where(call: CollectiveCall) -> str:
    group = "" if call.group == "WORLD" else f" on group {call.group}"
    site = f" at {call.site}" if call.site else ""
    return f"{call.label()}{group}{site}"


def _ranks_text(ranks: list[int]) -> str:
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    return "ranks " + ", ".join(str(r) for r in ranks)


def summarize(kind: str, calls: list, absent: tuple) -> str:
    """One line a person can act on: who entered what, where; who never arrived, and why."""
    if kind == "mismatch":
        by_signature: dict[str, list[CollectiveCall]] = {}
        for call in calls:
            by_signature.setdefault(call.signature, []).append(call)
        same_op = len({c.op for c in calls}) == 1
        parts = []
        for group in by_signature.values():
            first = group[0]
            detail = (
                f" with {first.args}"
                if same_op and first.args
                else (f" ({first.args})" if first.args else "")
            )
            parts.append(f"{_ranks_text([c.rank for c in group])} entered {_where(first)}{detail}")
        return "; ".join(parts) + (
            " (different shapes or arguments)" if same_op else " (different collectives)"
        )
    entered = _ranks_text([c.rank for c in calls])
    text = f"{entered} entered {_where(calls[0])}"
    for reason in absent:
        text += f"; rank {reason.rank} never entered it ({reason.reason})"
    return text
