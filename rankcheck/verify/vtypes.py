"""What a replay observed, as plain frozen dataclasses.

The launcher builds these from the messages the ranks sent; the verdict, the renderer, the CLI's
JSON output and the tests all read the same objects. Nothing here imports torch.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any, Optional, Tuple

# Outcomes of one replay (RunResult.outcome).
DIVERGED = "diverged"  # the ranks' collective sequences diverged: a hang, caught before it hung
CLEAN = "clean"  # every rank ran to the end with matching collective sequences
ERROR = "error"  # user code raised (and no divergence was observed)
TIMEOUT = "timeout"  # the wall-clock limit struck before any verdict
UNSUPPORTED = "unsupported"  # the code needs something gloo on CPU cannot stand in for
TORCH_MISSING = "torch-missing"

# How a rank's replay ended (RankOutcome.state).
FINISHED = "finished"  # the script (or function) returned
EXITED = "exited"  # sys.exit()/SystemExit
RAISED = "raised"  # an exception escaped user code
DIED = "died"  # the process went away without telling us (os._exit, a signal, a segfault)
STOPPED = "stopped"  # stopped by the verifier while waiting in a collective (after a divergence)
KILLED = "killed"  # still running when the verifier stopped the replay; killed
NO_TORCH = "no-torch"  # the rank could not import torch


def short_path(path: str) -> str:
    """A path relative to the working directory when it is below it (how findings print)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


@dataclass(frozen=True)
class Frame:
    path: str  # absolute
    line: int
    function: str = ""

    def __str__(self) -> str:
        return f"{short_path(self.path)}:{self.line}"


@dataclass(frozen=True)
class CollectiveCall:
    """One entry into a torch.distributed collective on one rank, recorded before it ran."""

    rank: int
    seq: int  # this rank's collective number, 1-based, over all groups (0: init_process_group)
    op: str  # "all_reduce", "barrier", "new_group", ...
    group: str  # "WORLD" or the member ranks, e.g. "[0, 1]"
    group_key: str  # identity of the group, the same on every rank
    group_seq: int  # number of this collective within its group
    members: Tuple[int, ...]
    signature: str  # what every member must agree on, e.g. "all_reduce f32[4] SUM"
    args: str  # for people: "f32[4]", "src=0", ...
    stack: Tuple[Frame, ...] = ()  # user frames, innermost first

    @property
    def site(self) -> Optional[Frame]:
        return self.stack[0] if self.stack else None

    def label(self) -> str:
        number = f" #{self.seq}" if self.seq else ""
        return f"{self.op}{number}"


@dataclass(frozen=True)
class LineHit:
    """How often a watched source line ran on one rank, and after which collective."""

    path: str
    line: int
    count: int
    first_after: int  # the rank's collective count when the line first ran
    last_after: int


@dataclass(frozen=True)
class RankError:
    type: str
    message: str
    frames: Tuple[Frame, ...]  # user frames, outermost first (traceback order)
    text: str  # the traceback trimmed to user frames, ready to print


@dataclass(frozen=True)
class FlightEntry:
    """One entry of the torch flight recorder (the second witness of what really ran)."""

    seq: int
    op: str
    state: str
    group: str
    sizes: str


@dataclass(frozen=True)
class RankOutcome:
    rank: int
    state: str
    exit_code: Optional[int] = None
    calls: Tuple[CollectiveCall, ...] = ()
    blocked: Optional[CollectiveCall] = None  # the collective it was held at when stopped
    error: Optional[RankError] = None
    exit_site: Optional[Frame] = None  # where sys.exit()/raise left user code
    line_hits: Tuple[LineHit, ...] = ()
    flight: Tuple[FlightEntry, ...] = ()
    flight_note: str = ""  # why there is no flight-recorder dump, when there is none
    stack: Tuple[Frame, ...] = ()  # where it was when the time limit struck (innermost first)
    stack_in_torch: bool = False  # ... and whether it was inside torch at that moment
    notes: Tuple[str, ...] = ()  # substitutions made on this rank ("backend nccl -> gloo")
    output: str = ""  # the tail of its stdout+stderr

    @property
    def collectives(self) -> int:
        return len([c for c in self.calls if c.seq])

    def hits(self, path: str, line: int) -> int:
        for hit in self.line_hits:
            if hit.line == line and hit.path == path:
                return hit.count
        return 0

    def ending(self, short: bool = False) -> str:
        """How this rank's replay ended, in words: "finished after #1"."""
        return " ".join(self._ending(short).split())

    def _ending(self, short: bool) -> str:
        after = f"after #{self.collectives}" if self.collectives else "before any collective"
        if short:  # in a table, the row already says after which collective
            after = ""
        if self.state == FINISHED:
            return f"finished {after}"
        if self.state == EXITED:
            where = f" at {self.exit_site}" if self.exit_site else ""
            return f"exited (code {self.exit_code}){where} {after}"
        if self.state == RAISED and self.error is not None:
            where = f" at {self.exit_site}" if self.exit_site else ""
            return f"raised {self.error.type}{where} {after}"
        if self.state == DIED:
            return f"died (exit code {self.exit_code}) {after}"
        if self.state == NO_TORCH:
            return "could not import torch"
        if self.blocked is not None:
            return f"was waiting in {self.blocked.label()} at {self.blocked.site}"
        if self.stack:
            return f"was still running at {self.stack[0]}"
        return f"was still running {after}"


@dataclass(frozen=True)
class AbsentRank:
    """A member of the divergent collective that never entered it, and why."""

    rank: int
    reason: str  # "finished after #1", "was waiting in barrier #2 at train.py:20"
    blocked: Optional[CollectiveCall] = None


@dataclass(frozen=True)
class Divergence:
    kind: str  # "missing" | "mismatch" | "deadlock"
    group: str
    group_seq: int
    entered: Tuple[CollectiveCall, ...]  # the calls the ranks were held at
    absent: Tuple[AbsentRank, ...]
    summary: str

    @property
    def ranks_entered(self) -> Tuple[int, ...]:
        return tuple(c.rank for c in self.entered)


@dataclass(frozen=True)
class RunResult:
    target: str
    command: Tuple[str, ...]
    nproc: int
    ranks: Tuple[RankOutcome, ...]
    divergence: Optional[Divergence] = None
    timed_out: bool = False
    timeout: float = 60.0
    elapsed: float = 0.0  # seconds from launch to the verdict
    wall: float = 0.0  # seconds from launch to the last child reaped
    unsupported: str = ""
    run_id: str = ""
    notes: Tuple[str, ...] = ()

    @property
    def outcome(self) -> str:
        if any(r.state == NO_TORCH for r in self.ranks):
            return TORCH_MISSING
        if self.unsupported:
            return UNSUPPORTED
        if self.divergence is not None:
            return DIVERGED
        if self.timed_out:
            return TIMEOUT
        if any(r.state in (RAISED, DIED) for r in self.ranks):
            return ERROR
        if any(r.state == EXITED and r.exit_code not in (0, None) for r in self.ranks):
            return ERROR
        return CLEAN

    @property
    def errors(self) -> Tuple[RankOutcome, ...]:
        return tuple(r for r in self.ranks if r.error is not None)

    def hang_evidence(self) -> bool:
        """At the time limit, some rank had left while another was still inside torch."""
        if not self.timed_out:
            return False
        stuck = any(r.stack_in_torch for r in self.ranks)
        left = any(r.state in (FINISHED, EXITED, RAISED, DIED) for r in self.ranks)
        return stuck and left

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["outcome"] = self.outcome
        return data
