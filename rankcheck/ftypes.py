"""The data that flows out of the analysis: findings and their evidence.

Everything here is a frozen dataclass of plain values so that every formatter (text, json, sarif,
github, lsp), the language server, the verifier and the tests read the same objects.
Lines are 1-based, columns are 1-based (ruff's and editors' convention in text output).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional, Tuple

# Severities, in the words SARIF and LSP both map from.
ERROR = "error"
WARNING = "warning"

# What kind of value made a guard rank-dependent (DESIGN.md, the rank-dependence lattice).
RANK_IDENTITY = "rank-identity"
PER_RANK_DATA = "per-rank-data"


@dataclass(frozen=True)
class Location:
    path: str  # as given/discovered, relative to the working directory when possible
    line: int
    column: int
    end_line: int = 0
    end_column: int = 0

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


# Evidence text of a value that differs per rank because a rank-dependent branch assigned it, and
# of what runs a per-rank number of times because such a branch skips loop rounds.
ASSIGNED_UNDER = "assigned under "
SKIPPED_UNDER = "rounds skipped by "
ASSIGNED_PAST = "assigned past the return under "  # on the ranks a rank test did not return on
CONTROL_PHRASES = (ASSIGNED_UNDER, SKIPPED_UNDER, ASSIGNED_PAST)


@dataclass(frozen=True)
class SourceStep:
    """One step by which a rank-dependent value travelled from its source towards the guard, e.g.
    "returned by `get_global_rank()`" at the call in train.py:51."""

    text: str
    location: Location


@dataclass(frozen=True)
class RankSource:
    """Where a rank-dependent value came from, e.g. `dist.get_rank()` at train.py:6, or the
    branch that assigned it (text "assigned under `if rank % 2:`"); `steps`, from the source on,
    the calls that returned it on its way to where it is used."""

    text: str
    location: Location
    steps: Tuple[SourceStep, ...] = ()

    @property
    def phrase(self) -> str:
        """The text as a reader meets it: code in backticks, a branch's description as it is."""
        return self.text if self.text.startswith(CONTROL_PHRASES) else f"`{self.text}`"


@dataclass(frozen=True)
class Guard:
    """The rank-dependent condition (or exit) that makes ranks take different paths."""

    location: Location
    text: str  # source of the guard head, e.g. "if rank == 0:"
    condition: str  # the condition alone, e.g. "rank == 0"
    kind: str = RANK_IDENTITY  # RANK_IDENTITY or PER_RANK_DATA
    source: Optional[RankSource] = None


@dataclass(frozen=True)
class ChainStep:
    """One call on the way from the flagged call down to the real collective."""

    location: Location
    callee: str  # display name of what is called here, e.g. "compute_mean()" or "dist.all_reduce"
    note: str = ""  # the catalog's reason for a framework API ("all-gathers every shard ...")


@dataclass(frozen=True)
class Edit:
    """Replace the text from `location` up to (not including) `end` with `content`.
    Both are 1-based line and column positions, in code points."""

    location: Location
    end: Location
    content: str


# A fix's applicability, in ruff's words: a safe fix keeps the program's meaning (here: the same
# program on the ranks that took the guard, and the hang gone); an unsafe one may change it.
SAFE = "safe"
UNSAFE = "unsafe"


@dataclass(frozen=True)
class Fix:
    """A rewrite that removes a finding (rankcheck.fix computes it from the source)."""

    applicability: str  # SAFE or UNSAFE
    message: str  # what the rewrite does, e.g. "Call `dist.all_reduce` on every rank, keep the print on rank 0"
    edits: Tuple[Edit, ...]

    def to_dict(self) -> dict[str, Any]:
        """ruff's JSON shape for a fix: rows and columns 1-based."""
        return {
            "applicability": self.applicability,
            "message": self.message,
            "edits": [
                {
                    "content": edit.content,
                    "location": {"row": edit.location.line, "column": edit.location.column},
                    "end_location": {"row": edit.end.line, "column": edit.end.column},
                }
                for edit in self.edits
            ],
        }


@dataclass(frozen=True)
class SequenceStep:
    """One collective (or a loop of them) in the sequence one class of ranks issues."""

    text: str  # "all_reduce", "barrier (group)", "loop", "return"
    location: Optional[Location] = None  # where the function being compared issues it
    depth: int = 0  # inside how many loops or uniform branches (their steps follow them)


@dataclass(frozen=True)
class RankSequence:
    """What one class of ranks issues in the function where the ranks part (rankcheck.sequences)."""

    ranks: str  # "ranks where `rank == 0` is true"
    steps: Tuple[SequenceStep, ...]
    diverges_at: int  # the first step that differs from the other class (len(steps): it ends first)


@dataclass(frozen=True)
class Finding:
    code: str  # "RC101"
    message: str
    location: Location
    severity: str = ERROR
    guard: Optional[Guard] = None
    chain: Tuple[ChainStep, ...] = ()
    # The collective at the end of the chain (canonical op name, e.g. "all_reduce"), if any.
    collective: str = ""
    # Where the rank-dependent value came from, for findings without a guard (RC104's argument).
    source: Optional[RankSource] = None
    # Filled by `check --verify`: confirmed / not-reproduced / not-reached / error / unsupported.
    verdict: Optional[str] = None
    verdict_detail: str = ""
    extra: Tuple[Tuple[str, str], ...] = field(default=())
    # The rank guard this finding repeats: its cause is a value that guard assigned differently
    # per rank, so the guard's own finding, when there is one, says it all (not in the output).
    cascade_of: Optional[Location] = field(default=None, compare=False, repr=False)
    # The classes of ranks compared where the finding's function diverges, side by side (the HTML
    # and markdown reports draw them; not in the JSON document).
    sequences: Tuple[RankSequence, ...] = field(default=(), compare=False, repr=False)
    # The rewrite that removes the finding, when one is provably safe enough (rankcheck.fix).
    fix: Optional[Fix] = field(default=None, compare=False, repr=False)

    @property
    def name(self) -> str:
        from rankcheck.rules_meta import rule_name

        return rule_name(self.code)

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON shape (see README, "JSON output")."""
        data = asdict(self)
        del data["cascade_of"]
        del data["sequences"]
        data["fix"] = self.fix.to_dict() if self.fix is not None else None
        data["name"] = self.name
        data["extra"] = dict(self.extra)
        return data
