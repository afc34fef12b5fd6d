"""RC102: `if rank != 0: return` and, later in the same block, the collective the other ranks
wait in. The collective moves above the exit, so every rank makes it before some leave.

    if dist.get_rank() != 0:                   dist.barrier()
        return                           ->    if dist.get_rank() != 0:
    save(model)                                    return
    dist.barrier()                             save(model)

Unsafe: the ranks that stay now make the collective before the statements between, not after
(a barrier meant to wait for a checkpoint no longer does). Offered only when the collective is a
statement of its own in the exit's block, its arguments are pure, and the statements between
neither write what it reads, read what it may change, nor leave the function."""

from __future__ import annotations

from typing import List, Optional, Sequence

import libcst as cst

from rankcheck.fix.guard_move import flagged_call
from rankcheck.fix.model import SourceModel, bound_names, call_argument_names, contains, names_in, receiver_of
from rankcheck.fix.proposal import Proposal, guard_is_lone
from rankcheck.ftypes import UNSAFE, Finding

CODES = ("RC102",)
EXITS = (cst.Return, cst.Raise, cst.Break, cst.Continue)


def propose(model: SourceModel, finding: Finding, neighbours: Sequence[Finding]) -> Optional[Proposal]:
    guard_ref = finding.guard
    if finding.code not in CODES or guard_ref is None or not finding.chain:
        return None
    if finding.chain[0].location.path != finding.location.path:
        return None
    guard = model.node_at(guard_ref.location.line, guard_ref.location.column, cst.If)
    if not isinstance(guard, cst.If) or guard.orelse is not None or not _only_returns(guard.body):
        return None
    call = flagged_call(model, finding)
    if call is None:
        return None
    statement = model.statement_of(call)
    if not isinstance(statement, cst.Expr) or statement.value is not call:
        return None
    line = model.parent(statement)
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    block = model.parent(guard)
    if block is not model.parent(line) or not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None
    body: List[cst.BaseStatement] = list(block.body)
    start, end = body.index(guard), body.index(line)
    if end <= start:
        return None
    between = body[start + 1 : end]
    if not _independent(model, call, between) or not model.is_pure(guard.test) or not guard_is_lone(finding, neighbours):
        return None
    moved = line.with_changes(leading_lines=guard.leading_lines)
    kept_guard = guard.with_changes(leading_lines=[])
    new_body = body[:start] + [moved, kept_guard] + body[start + 1 : end] + body[end + 1 :]
    after = body[end + 1] if end + 1 < len(body) else None
    if after is not None and not any(e.comment for e in getattr(after, "leading_lines", ())) and line.leading_lines:
        new_body[end + 1] = body[end + 1].with_changes(leading_lines=line.leading_lines)
    code = model.module.deep_replace(block, block.with_changes(body=new_body)).code  # type: ignore[union-attr]
    called = finding.chain[0].callee
    return Proposal(code, f"Move `{called}` above `{guard_ref.text}` so every rank makes it before some leave", UNSAFE)


def _only_returns(body: cst.BaseSuite) -> bool:
    """The guard's body is the exit alone: `return`, `return value` of a pure value."""
    lines = body.body if isinstance(body, cst.IndentedBlock) else [body]
    parts = [p for line in lines for p in getattr(line, "body", [])]
    return len(parts) == 1 and isinstance(parts[0], cst.Return)


def _independent(model: SourceModel, call: cst.Call, between: Sequence[cst.BaseStatement]) -> bool:
    receiver = receiver_of(call)
    if receiver is not None and not model.is_pure(receiver):
        return False
    if not all(model.is_pure(arg.value) for arg in call.args):
        return False
    uses = call_argument_names(call)
    receiver_names = names_in(receiver) if receiver is not None else set()
    for statement in between:
        if contains(statement, EXITS + (cst.Yield, cst.Global, cst.Nonlocal)):
            return False
        if uses & names_in(statement) or receiver_names & bound_names(statement):
            return False
    return True
