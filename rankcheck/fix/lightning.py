"""Lightning: `self.log(..., sync_dist=True)` under `if self.trainer.is_global_zero:` reduces
the value across processes on one process only. Under that guard the value is meant for rank
zero alone, which is what `rank_zero_only=True` says: no reduction, nothing to wait for.

    if self.trainer.is_global_zero:                  if self.trainer.is_global_zero:
        self.log("acc", acc, sync_dist=True)   ->        self.log("acc", acc, rank_zero_only=True)

The process that logs runs the same code, and logs its own value: Lightning's documented way to
log from rank zero only. Offered when the guard is the Lightning rank-zero test itself."""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from rankcheck.fix.guard_move import flagged_call
from rankcheck.fix.model import SourceModel
from rankcheck.fix.proposal import Proposal, guard_is_lone
from rankcheck.ftypes import SAFE, Finding

CODES = ("RC101",)
LOG_METHODS = ("log", "log_dict")
RANK_ZERO_TESTS = ("is_global_zero",)


def propose(model: SourceModel, finding: Finding, neighbours: Sequence[Finding]) -> Optional[Proposal]:
    guard = finding.guard
    if finding.code not in CODES or guard is None or len(finding.chain) != 1 or not finding.chain[0].note:
        return None
    if not any(guard.condition.strip() == test or guard.condition.strip().endswith("." + test) for test in RANK_ZERO_TESTS):
        return None
    call = flagged_call(model, finding)
    if call is None or not isinstance(call.func, cst.Attribute) or call.func.attr.value not in LOG_METHODS:
        return None
    keywords = {arg.keyword.value: arg for arg in call.args if arg.keyword is not None}
    sync = keywords.get("sync_dist")
    if sync is None or "rank_zero_only" in keywords or not (isinstance(sync.value, cst.Name) and sync.value.value == "True"):
        return None
    if not guard_is_lone(finding, neighbours):
        return None
    assert sync.keyword is not None
    fixed = call.deep_replace(sync, sync.with_changes(keyword=sync.keyword.with_changes(value="rank_zero_only")))
    code = model.module.deep_replace(call, fixed).code  # type: ignore[union-attr]
    return Proposal(code, f"Log with `rank_zero_only=True` instead of `sync_dist=True` under `{guard.text}`", SAFE)
