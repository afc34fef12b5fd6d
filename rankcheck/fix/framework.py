"""A framework call every rank must make (accelerate `wait_for_everyone()` and `save_state()`,
DeepSpeed `save_checkpoint()`, FSDP's full `state_dict()`, `torch.distributed.checkpoint.save`),
made under a main-process guard: it moves out of the guard, the main-process work stays inside.

    if accelerator.is_main_process:           accelerator.save_state(out)
        accelerator.save_state(out)     ->    if accelerator.is_main_process:
        upload(out)                               upload(out)

A call that returns nothing and ends the guard's body moves after it instead (the guard's work
first, then every rank waits). The finding's chain must name the catalog's reason (its note):
the call is the framework API itself, not a project function that happens to share its name."""

from __future__ import annotations

from typing import Optional, Sequence

from rankcheck.fix.guard_move import describe, find_move, moved_code
from rankcheck.fix.knowledge import EVERY_RANK_FRAMEWORK_CALLS, matches
from rankcheck.fix.model import SourceModel
from rankcheck.fix.proposal import Proposal, guard_is_lone
from rankcheck.ftypes import SAFE, Finding

CODES = ("RC101",)


def propose(model: SourceModel, finding: Finding, neighbours: Sequence[Finding]) -> Optional[Proposal]:
    if finding.code not in CODES or len(finding.chain) != 1 or not finding.chain[0].note:
        return None
    move = find_move(model, finding)
    if move is None or not matches(move.called, EVERY_RANK_FRAMEWORK_CALLS):
        return None
    made = moved_code(model, move, set(), finding, neighbours) if guard_is_lone(finding, neighbours) else None
    if made is None:
        return None
    move, code = made
    return Proposal(code, describe(model, move, "process", "the main-process work"), SAFE)
