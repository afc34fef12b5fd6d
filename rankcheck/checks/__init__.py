"""The rules. One module per rule, named after it; each exposes CODE and `check(analysis)`.

`RULES` is the registry the API runs and the registry test reads (with rules/codes.toml)."""

from __future__ import annotations

from rankcheck.checks import collective_in_rank_zero_only, collective_under_rank_branch, rank_exit_before_collective

RULES = {
    collective_under_rank_branch.CODE: collective_under_rank_branch,
    rank_exit_before_collective.CODE: rank_exit_before_collective,
    collective_in_rank_zero_only.CODE: collective_in_rank_zero_only,
}
