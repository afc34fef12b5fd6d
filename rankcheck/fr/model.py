"""What a flight-recorder dump says, normalised across dump versions and formats.

The reader turns every pickle or JSON layout (see `rankcheck.fr.layouts`) into these frozen
dataclasses, so the analysis never looks at raw keys and never cares which torch wrote the dump.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

Sizes = Tuple[Tuple[int, ...], ...]


@dataclass(frozen=True)
class Frame:
    """One Python (or, with TORCH_FR_CPP_STACK=1, C++) frame of the stack recorded with an entry."""

    filename: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}"


@dataclass(frozen=True)
class Entry:
    """One recorded collective (or p2p op) call on one rank."""

    group: str  # process group name, the same string on every rank (e.g. "0")
    group_desc: str  # e.g. "default_pg", "undefined"
    seq: int  # collective_seq_id: counts collectives per group, 1-based; 0 for p2p ops
    op: str  # "all_reduce", "barrier", ... (profiling name without the backend prefix)
    profiling_name: str  # as recorded, e.g. "gloo:all_reduce"
    is_p2p: bool
    input_sizes: Sizes
    output_sizes: Sizes
    input_dtypes: Tuple[str, ...]
    output_dtypes: Tuple[str, ...]
    state: str  # "scheduled" | "started" | "completed" as recorded
    retired: bool
    record_id: int = -1
    pg_id: str = ""
    time_created_ns: Optional[int] = None
    frames: Tuple[Frame, ...] = ()

    def signature(self) -> tuple:
        """What must agree across ranks for the same sequence number."""
        return (self.op, self.input_sizes, self.output_sizes, self.input_dtypes, self.output_dtypes)


@dataclass(frozen=True)
class GroupStatus:
    """The per-group counters torch keeps beside the ring buffer (dump versions >= 2.3).

    -1 means "never" (torch's own convention; gloo never reports `started`)."""

    last_enqueued: int
    last_started: int
    last_completed: int


@dataclass(frozen=True)
class RankDump:
    """Everything read from one rank's dump file."""

    rank: int
    path: str
    format: str  # "pickle" | "json"
    version: str  # the dump's own "version" string, e.g. "2.10"
    entries: Tuple[Entry, ...]
    # group name -> status, when the dump has `pg_status`
    status: Dict[str, GroupStatus] = field(default_factory=dict)
    # group name -> global ranks, from `pg_config` when it is usable
    group_ranks: Dict[str, Tuple[int, ...]] = field(default_factory=dict)
    # every integer rank that appears in any `pg_config` ranks list (a lower bound on the world)
    config_ranks: Tuple[int, ...] = ()
    has_stacks: bool = False
    library: str = ""  # comm_lib_version / nccl_version when recorded


class DumpError(Exception):
    """A dump that cannot be read: unreadable, not a dump, unknown version, unsafe pickle."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message
