"""The rules. One module per rule, named after it; each exposes CODE and `check(analysis)`.

`RULES` is the registry the API runs and the registry test reads (with rules/codes.toml)."""

from __future__ import annotations

from rankcheck.checks import (
    collective_in_rank_zero_only,
    collective_on_exception_path,
    collective_under_rank_branch,
    dataloader_fork_after_cuda,
    mismatched_collective_sequences,
    monitored_barrier_without_gloo,
    process_group_without_timeout,
    rank_dependent_collective_argument,
    rank_dies_before_collective,
    rank_exit_before_collective,
    uneven_loop_collective,
)

RULES = {
    module.CODE: module
    for module in (
        collective_under_rank_branch,
        rank_exit_before_collective,
        uneven_loop_collective,
        rank_dependent_collective_argument,
        collective_on_exception_path,
        mismatched_collective_sequences,
        collective_in_rank_zero_only,
        rank_dies_before_collective,
        process_group_without_timeout,
        monitored_barrier_without_gloo,
        dataloader_fork_after_cuda,
    )
}
