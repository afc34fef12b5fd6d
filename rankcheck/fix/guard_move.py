"""Moving one call out of a rank guard: the mechanics the hoist and the framework fixes share.

The flagged call is the first thing the guard's body does (or, for a call that returns nothing,
the last). It moves to just before the guard (after it), so the ranks that take the guard run
exactly what they ran before, in the same order, and every other rank now makes the call too.
What stays in the guard is decided by the fix kind (`Move.rest`).

A call inside a larger statement (`torch.save(model.state_dict(), path)`) is pulled out into a
fresh variable first, when nothing in that statement runs before it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from rankcheck.fix.knowledge import RESULT_NAMES
from rankcheck.fix.model import (
    SourceModel,
    assigned_names,
    bound_names,
    call_argument_names,
    contains,
    dotted,
    names_in,
    read_later,
    receiver_of,
)
from rankcheck.fix.proposal import proven
from rankcheck.ftypes import Finding

Statement = Union[cst.BaseSmallStatement, cst.BaseStatement]


@dataclass(frozen=True)
class Move:
    """A call that can leave its guard, and what leaving would look like."""

    guard: cst.If
    call: cst.Call
    statement: cst.BaseSmallStatement  # the small statement holding the call
    whole: bool  # the statement is the call (`f(x)`, `y = f(x)`), not a larger one holding it
    first: bool  # the call runs first in the guard (it moves before it); else last (after it)
    rest: Tuple[cst.BaseSmallStatement, ...]  # the guard's small statements that stay
    rest_compound: bool  # the guard keeps a compound statement too (an `if`, `with`, `for`)
    written: Set[str]  # names the moved call binds
    fresh: Optional[str] = None  # the variable a pulled-out call's value goes to
    # `if uniform and rank_test:` split in two: the call stays under the uniform half only.
    uniform: Optional[cst.BaseExpression] = None
    rank_test: Optional[cst.BaseExpression] = None
    # Plain assignments of pure values the call needs, before it in the guard: they leave with it.
    prefix: Tuple[cst.SimpleStatementLine, ...] = ()

    @property
    def test(self) -> cst.BaseExpression:
        """What decides, for the ranks that now make the call too, whether the guard is taken."""
        return self.rank_test if self.rank_test is not None else self.guard.test

    @property
    def called(self) -> str:
        return dotted(self.call.func) or "the call"


def find_move(model: SourceModel, finding: Finding) -> Optional[Move]:
    """The move of the finding's call out of the finding's guard, when its shape allows one."""
    guard_loc = finding.guard.location if finding.guard is not None else None
    if guard_loc is None or not finding.chain:
        return None
    guard = model.node_at(guard_loc.line, guard_loc.column, cst.If)
    if not isinstance(guard, cst.If) or guard.orelse is not None:
        return None
    call = flagged_call(model, finding)
    if call is None:
        return None
    statement = model.statement_of(call)
    if not isinstance(statement, cst.BaseSmallStatement):
        return None
    spot = model.spot(statement)
    if spot is None or spot.block is not guard.body:
        return None
    parts = _small_statements(guard.body)
    if parts is None:
        return None
    flat, compound = parts
    position = next(i for i, s in enumerate(flat) if s is statement)
    value = getattr(statement, "value", None)
    whole = value is call and isinstance(statement, (cst.Expr, cst.Assign, cst.AnnAssign))
    written = (assigned_names(statement) or set()) if whole and not isinstance(statement, cst.Expr) else set()
    if whole and written == set() and not isinstance(statement, cst.Expr):
        return None  # `obj.attr = f()`, `a[i] = f()`: a target that is not a plain name
    prefix = _pure_prefix(model, guard.body, statement) if whole and position > 0 else ()
    first = (position == 0 or len(prefix) == position) and not _compound_before(guard.body, statement)
    last = whole and isinstance(statement, cst.Expr) and position == len(flat) - 1 and not compound
    if not (first or last):
        return None
    if first and prefix:
        last = False
        written = written | set().union(*(assigned_names(line.body[0]) or set() for line in prefix))
    else:
        prefix = ()
    fresh = None
    if not whole:
        if not first or not _runs_first(model, statement, call):
            return None
        fresh = _fresh_name(model, call)
        written = {fresh}
    leaving = {id(statement)} | {id(line.body[0]) for line in prefix}
    rest = tuple(s for s in flat if id(s) not in leaving) if whole else tuple(flat)
    return Move(guard, call, statement, whole, first, rest, compound, written, fresh, prefix=prefix)


def _pure_prefix(model: SourceModel, body: cst.BaseSuite, statement: cst.BaseSmallStatement) -> Tuple[cst.SimpleStatementLine, ...]:
    """The lines before the call's own line, when each is one plain assignment of a pure value
    (`path = os.path.join(out, name)`); () otherwise."""
    if not isinstance(body, cst.IndentedBlock):
        return ()
    lines: List[cst.SimpleStatementLine] = []
    for line in body.body:
        if not isinstance(line, cst.SimpleStatementLine):
            return ()
        if any(s is statement for s in line.body):
            return tuple(lines) if len(line.body) == 1 else ()
        part = line.body[0]
        if len(line.body) != 1 or assigned_names(part) is None or not model.is_pure(getattr(part, "value", None) or cst.Ellipsis()):
            return ()
        lines.append(line)
    return ()


def flagged_call(model: SourceModel, finding: Finding) -> Optional[cst.Call]:
    """The call at the finding's location that the chain's first step names."""
    loc = finding.location if finding.code != "RC102" else finding.chain[0].location
    candidates = model.calls_at(loc.line, loc.column)
    wanted = finding.chain[0].callee.split("(")[0]
    named = [c for c in candidates if dotted(c.func) == wanted]
    if named:
        return named[-1]
    return candidates[0] if len(candidates) == 1 else None


def _small_statements(body: cst.BaseSuite) -> Optional[Tuple[List[cst.BaseSmallStatement], bool]]:
    """The guard body's small statements in order, and whether it holds compound ones too."""
    if isinstance(body, cst.SimpleStatementSuite):
        return list(body.body), False
    flat: List[cst.BaseSmallStatement] = []
    compound = False
    for line in body.body:
        if isinstance(line, cst.SimpleStatementLine):
            flat.extend(line.body)
        else:
            compound = True
    return flat, compound


def _compound_before(body: cst.BaseSuite, statement: cst.BaseSmallStatement) -> bool:
    if isinstance(body, cst.SimpleStatementSuite):
        return False
    for line in body.body:
        if isinstance(line, cst.SimpleStatementLine) and any(s is statement for s in line.body):
            return False
        if not isinstance(line, cst.SimpleStatementLine):
            return True
    return False


def _runs_first(model: SourceModel, statement: cst.CSTNode, call: cst.Call) -> bool:
    """Nothing in `statement` that could have an effect runs before `call` (Python evaluates left
    to right, a call after its arguments), and `call` runs whenever the statement does."""
    ancestors = []
    node: Optional[cst.CSTNode] = model.parent(call)
    while node is not None and node is not statement:
        if isinstance(node, (cst.Lambda, cst.IfExp, cst.BooleanOperation, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            return False
        ancestors.append(node)
        node = model.parent(node)
    start = model.positions[call].start
    for other in _calls_in(statement):
        if other is call or any(other is a for a in ancestors) or _inside(model, other, call):
            continue
        where = model.positions[other].start
        if (where.line, where.column) < (start.line, start.column):
            return False
    return True


def _calls_in(node: cst.CSTNode) -> List[cst.Call]:
    found: List[cst.Call] = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, inner: cst.Call) -> None:
            found.append(inner)

    node.visit(_Calls())
    return found


def _inside(model: SourceModel, node: cst.CSTNode, container: cst.CSTNode) -> bool:
    current: Optional[cst.CSTNode] = model.parent(node)
    while current is not None:
        if current is container:
            return True
        current = model.parent(current)
    return False


def _fresh_name(model: SourceModel, call: cst.Call) -> str:
    last = (dotted(call.func) or "value").rsplit(".", 1)[-1]
    base = RESULT_NAMES.get(last, f"{last}_result")
    taken = names_in(model.module) | _attribute_names(model.module)
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def _attribute_names(module: cst.Module) -> Set[str]:
    names: Set[str] = set()

    class _Attrs(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            names.add(node.attr.value)

    module.visit(_Attrs())
    return names


def safe_to_move(model: SourceModel, move: Move, mutated: Set[str]) -> bool:
    """The checks every move makes: the call's receiver and arguments are pure, the guard's
    condition reads nothing the call writes, and what the call writes (its result, and any
    argument it may change in place: `mutated`) is not read after the guard by the ranks that
    skip it. A call moved after the guard reads nothing the guard's body writes."""
    call = move.call
    receiver = receiver_of(call)
    if receiver is not None and not model.is_pure(receiver):
        return False
    if not all(model.is_pure(arg.value) for arg in call.args):
        return False
    written = move.written | mutated
    if written & names_in(move.guard.test) or not model.is_pure(move.guard.test):
        return False
    if contains(move.test, (cst.BooleanOperation, cst.IfExp)):
        # `if step % 100 == 0 and rank == 0:` unsplit: the uniform half must stay around the
        # call (see `splits`), never dropped.
        return False
    if read_later(model, written, move.guard):
        return False
    if not move.first:
        receiver_names = names_in(receiver) if receiver is not None else set()
        for statement in move.rest:
            if call_argument_names(call) & names_in(statement) or receiver_names & bound_names(statement):
                return False
    return True


def apply_move(model: SourceModel, move: Move) -> str:
    """The module's code with the call moved out of its guard."""
    moved, new_guard = _split(move)
    if move.uniform is not None:
        return model.module.visit(_Replace(move.guard, [_nested(move, moved, new_guard)])).code
    # The guard's leading comments introduced the block; the block now starts with the call.
    head = moved[0].with_changes(leading_lines=list(move.guard.leading_lines) + list(moved[0].leading_lines))
    if new_guard is None:
        replacement: List[cst.BaseStatement] = [head, *moved[1:]]
    elif move.first:
        replacement = [head, *moved[1:], new_guard.with_changes(leading_lines=[])]
    else:
        replacement = [new_guard, moved[-1].with_changes(leading_lines=[])]
    return model.module.visit(_Replace(move.guard, replacement)).code


def _nested(move: Move, moved: List[cst.SimpleStatementLine], rest: Optional[cst.If]) -> cst.If:
    """`if uniform:` holding the call, then `if rank_test:` holding the rest."""
    assert move.uniform is not None and move.rank_test is not None
    inner: List[cst.BaseStatement] = list(moved)
    if rest is not None:
        inner.append(rest.with_changes(test=move.rank_test, leading_lines=[]))
    return move.guard.with_changes(test=move.uniform, body=cst.IndentedBlock(body=inner))


def splits(move: Move) -> List[Move]:
    """The ways to read `if a and b and c:` as a uniform half and a rank test (each conjunct in
    turn as the rank test); none for other guards. Which reading is right is for the analysis of
    the fixed text to show (proposal.proven): only the right one makes the finding go."""
    if not move.first or not isinstance(move.guard.test, cst.BooleanOperation):
        return []
    conjuncts = _conjuncts(move.guard.test)
    if conjuncts is None or len(conjuncts) < 2:
        return []
    out = []
    for index, rank_test in enumerate(conjuncts):
        others = [c for i, c in enumerate(conjuncts) if i != index]
        uniform = others[0]
        for more in others[1:]:
            uniform = cst.BooleanOperation(left=uniform, operator=cst.And(), right=more)
        out.append(replace(move, uniform=uniform, rank_test=rank_test))
    return out


def _conjuncts(test: cst.BaseExpression) -> Optional[List[cst.BaseExpression]]:
    if isinstance(test, cst.BooleanOperation) and not test.lpar:
        if not isinstance(test.operator, cst.And):
            return None
        left, right = _conjuncts(test.left), _conjuncts(test.right)
        if left is None or right is None:
            return None
        return left + right
    return [test]


def _split(move: Move) -> Tuple[List[cst.SimpleStatementLine], Optional[cst.If]]:
    """The statement lines that leave, and the guard that stays (None when nothing stays)."""
    moved, guard = _split_one(move)
    return list(move.prefix) + [moved], guard


def _split_one(move: Move) -> Tuple[cst.SimpleStatementLine, Optional[cst.If]]:
    guard = move.guard
    body = guard.body
    if move.whole:
        leaving: cst.BaseSmallStatement = move.statement.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    else:
        assert move.fresh is not None
        leaving = cst.Assign(targets=[cst.AssignTarget(cst.Name(move.fresh))], value=move.call)
    moved_line = cst.SimpleStatementLine(body=[leaving])
    if isinstance(body, cst.IndentedBlock):
        lines: List[cst.BaseStatement] = []
        for line in body.body:
            if any(line is gone for gone in move.prefix):
                continue
            if isinstance(line, cst.SimpleStatementLine) and any(s is move.statement for s in line.body):
                if move.whole:
                    if len(line.body) == 1:
                        moved_line = line.with_changes(body=[leaving])  # its comments go with it
                        continue
                    line = line.with_changes(body=_without(line.body, move.statement))
                else:
                    line = _with_name(line, move)
            lines.append(line)
        if not lines:
            return moved_line, None
        if move.whole and lines and len(lines) < len(body.body) and move.first and not any(e.comment for e in getattr(lines[0], "leading_lines", ())):
            first = lines[0]
            leading = getattr(first, "leading_lines", ())
            lines[0] = first.with_changes(leading_lines=[]) if not any(e.comment for e in leading) else first
        return moved_line, guard.with_changes(body=body.with_changes(body=lines))
    assert isinstance(body, cst.SimpleStatementSuite)
    if move.whole:
        parts = _without(body.body, move.statement)
    else:
        parts = [_with_name(p, move) if p is move.statement else p for p in body.body]
    if not parts:
        return moved_line, None
    return moved_line, guard.with_changes(body=body.with_changes(body=parts))


def _with_name(node: Any, move: Move) -> Any:
    """`node` with the pulled-out call replaced by its variable."""
    return node.deep_replace(move.call, cst.Name(move.fresh or ""))


def _without(parts: Sequence[cst.BaseSmallStatement], gone: cst.BaseSmallStatement) -> List[cst.BaseSmallStatement]:
    kept = [p for p in parts if p is not gone]
    if kept:
        kept[-1] = kept[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return kept


class _Replace(cst.CSTTransformer):
    def __init__(self, target: cst.CSTNode, replacement: List[cst.BaseStatement]) -> None:
        self.target = target
        self.replacement = replacement

    def leave_If(self, original_node: cst.If, updated_node: cst.If) -> Union[cst.BaseStatement, cst.FlattenSentinel]:
        if original_node is self.target:
            return cst.FlattenSentinel(self.replacement)
        return updated_node


def describe(model: SourceModel, move: Move, ranks: str, kept: str) -> str:
    """The fix's message: where the call goes, and what stays under the rank test."""
    test = f"`if {model.module.code_for_node(move.test).strip()}:`"
    if move.uniform is not None:
        uniform = model.module.code_for_node(move.uniform).strip()
        return f"Call `{move.called}()` on every {ranks} when `{uniform}`; keep {kept} under {test}"
    where = "before" if move.first else "after"
    return f"Call `{move.called}()` on every {ranks}, {where} {test}; keep {kept} under it"


def moved_code(model: SourceModel, move: Move, mutated: Set[str], finding: Finding, neighbours: Sequence[Finding]) -> Optional[Tuple[Move, str]]:
    """The move as it can be made (as is, or with its guard split, proven by the analysis of the
    fixed text) and the module's code after it; None when neither is safe."""
    if safe_to_move(model, move, mutated):
        return move, apply_move(model, move)
    for split in splits(move):
        if safe_to_move(model, split, mutated) and model.proofs[0] > 0:
            model.proofs[0] -= 1
            code = apply_move(model, split)
            if proven(model, code, finding):
                return split, code
    return None
