"""The parsed file a fix reads: nodes found by the positions a finding gives, the statement lists
they sit in, and the facts about statements the fixes decide on (names read and written, pure
expressions, whether a name is read again after a point).

Every question here errs on the side of "no": a name the check cannot follow counts as read, an
expression it does not know counts as impure. A fix that is not offered costs nothing."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from rankcheck.fix.knowledge import PURE_CALLS, matches
from rankcheck.frontend.positions import node_ranges

Block = Union[cst.Module, cst.IndentedBlock, cst.SimpleStatementSuite]
LOOPS = (cst.For, cst.While)
SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


@dataclass(frozen=True)
class Spot:
    """A small statement inside the statement list of a block: `block.body[index]` is the
    statement line (or compound statement) and `part` its small statement, when it is a line."""

    block: Block
    index: int
    part: Optional[int] = None


@dataclass(frozen=True)
class Start:
    line: int  # 1-based
    column: int  # 0-based code points


@dataclass(frozen=True)
class Where:
    start: Start


class _Parents(cst.CSTVisitor):
    """One pass: each node's parent, its start, and the nodes by start (libcst's `children`
    re-visits a node to list them, which made a walk over it quadratic)."""

    def __init__(self, ranges: Dict[int, Tuple[int, int, int, int]]) -> None:
        self.ranges = ranges
        self.parents: Dict[cst.CSTNode, cst.CSTNode] = {}
        self.positions: Dict[cst.CSTNode, Where] = {}
        self.starting: Dict[Tuple[int, int], List[cst.CSTNode]] = {}
        self.stack: List[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stack:
            self.parents[node] = self.stack[-1]
        found = self.ranges.get(id(node))
        if found is not None:
            self.positions[node] = Where(Start(found[0], found[1]))
            self.starting.setdefault((found[0], found[1]), []).append(node)
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()


class SourceModel:
    def __init__(self, text: str, path: str = "", proofs: Optional[List[int]] = None) -> None:
        self.text = text
        self.path = path
        self.proofs = proofs if proofs is not None else [0]  # analyses left for proofs, shared
        self._alone: Optional[Counter] = None
        self.module = cst.parse_module(text)
        # Positions from the frontend's own walk (a fraction of PositionProvider's cost), and the
        # parents from one pass over the tree: a fix reads a handful of nodes per file.
        ranges = node_ranges(self.module)
        walk = _Parents(ranges)
        self.module.visit(walk)
        self.parents = walk.parents
        self.positions = walk.positions
        self._starting = walk.starting

    def alone(self) -> Optional[Counter]:
        """The findings of this text analysed by itself (what proofs compare against), once."""
        if self._alone is None:
            from rankcheck.fix.proposal import alone_findings

            self._alone = alone_findings(self.path, self.text)
        return Counter(self._alone) if self._alone is not None else None

    # -- finding nodes by position ------------------------------------------------------------

    def node_at(self, line: int, column: int, kind: type) -> Optional[cst.CSTNode]:
        """A node of `kind` that starts at 1-based `line`:`column`."""
        return next((n for n in self._starting.get((line, column - 1), []) if isinstance(n, kind)), None)

    def calls_at(self, line: int, column: int) -> List[cst.Call]:
        """Calls starting there, outermost first (`a.b().c()` starts two calls at one spot)."""
        found = [n for n in self._starting.get((line, column - 1), []) if isinstance(n, cst.Call)]
        return sorted(found, key=lambda n: -len(self.module.code_for_node(n)))

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return self.parents.get(node)

    def statement_of(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The small statement (or compound statement) holding `node`."""
        current: Optional[cst.CSTNode] = node
        while current is not None and not isinstance(current, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            current = self.parent(current)
        return current

    def spot(self, statement: cst.CSTNode) -> Optional[Spot]:
        """Where a small or compound statement sits in its block."""
        line = self.parent(statement) if isinstance(statement, cst.BaseSmallStatement) else None
        holder = line if isinstance(line, cst.SimpleStatementLine) else statement
        block = self.parent(holder)
        if isinstance(block, cst.SimpleStatementSuite):
            index = next((i for i, s in enumerate(block.body) if s is statement), None)
            return Spot(block, index) if index is not None else None
        if not isinstance(block, (cst.Module, cst.IndentedBlock)):
            return None
        index = next((i for i, s in enumerate(block.body) if s is holder), None)
        if index is None:
            return None
        part = None
        if isinstance(holder, cst.SimpleStatementLine):
            part = next(i for i, s in enumerate(holder.body) if s is statement)
        return Spot(block, index, part)

    def owner(self, block: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The compound statement (or module) a block belongs to."""
        current = self.parent(block)
        while current is not None and not isinstance(current, (cst.BaseCompoundStatement, cst.Module)):
            current = self.parent(current)
        return current

    # -- facts -------------------------------------------------------------------------------

    def is_pure(self, node: cst.CSTNode) -> bool:
        """Evaluating it has no effect and gives the same value wherever it moves among statements
        that do not write what it reads: names, constants, attributes, subscripts, operators,
        containers, f-strings and the calls of PURE_CALLS over those."""
        if isinstance(node, (cst.Name, cst.BaseNumber, cst.SimpleString, cst.Ellipsis)):
            return True
        if isinstance(node, cst.Attribute):
            return self.is_pure(node.value)
        if isinstance(node, cst.Subscript):
            return self.is_pure(node.value) and all(self.is_pure(e.slice) for e in node.slice)
        if isinstance(node, (cst.Index,)):
            return self.is_pure(node.value)
        if isinstance(node, cst.Slice):
            return all(self.is_pure(part) for part in (node.lower, node.upper, node.step) if part is not None)
        if isinstance(node, (cst.BinaryOperation, cst.Comparison, cst.UnaryOperation, cst.BooleanOperation)):
            return all(self.is_pure(child) for child in _expressions(node))
        if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
            return all(self.is_pure(e.value) for e in node.elements)
        if isinstance(node, cst.Dict):
            return all(isinstance(e, cst.DictElement) and self.is_pure(e.key) and self.is_pure(e.value) for e in node.elements)
        if isinstance(node, cst.FormattedString):
            return all(self.is_pure(p.expression) for p in node.parts if isinstance(p, cst.FormattedStringExpression))
        if isinstance(node, cst.ConcatenatedString):
            return self.is_pure(node.left) and self.is_pure(node.right)
        if isinstance(node, cst.Call):
            called = dotted(node.func)
            if called is None or not matches(called, PURE_CALLS):
                return False
            receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
            return (receiver is None or self.is_pure(receiver)) and all(self.is_pure(arg.value) for arg in node.args)
        return False


def dotted(node: cst.CSTNode) -> Optional[str]:
    """`a.b.c` for a name or an attribute chain over names; None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    if isinstance(node, cst.Call):  # `self.trainer.strategy().x`: the call's own name
        return dotted(node.func)
    return None


def _expressions(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    for child in node.children:
        if isinstance(child, cst.BaseExpression):
            yield child
        elif isinstance(child, cst.ComparisonTarget):
            yield child.comparator


class _Names(cst.CSTVisitor):
    """Every name used in a subtree, attribute and keyword names aside."""

    def __init__(self) -> None:
        self.names: Set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False


def names_in(node: cst.CSTNode) -> Set[str]:
    visitor = _Names()
    node.visit(visitor)
    return visitor.names


def assigned_names(statement: cst.CSTNode) -> Optional[Set[str]]:
    """The names a plain `a = ...` / `a, b = ...` / `a: T = ...` binds; None for other targets."""
    if isinstance(statement, cst.Assign):
        targets = [t.target for t in statement.targets]
    elif isinstance(statement, cst.AnnAssign) and statement.value is not None:
        targets = [statement.target]
    else:
        return None
    names: Set[str] = set()
    for target in targets:
        elements = target.elements if isinstance(target, (cst.Tuple, cst.List)) else [target]
        for element in elements:
            value = element.value if isinstance(element, cst.Element) else element
            if not isinstance(value, cst.Name):
                return None
            names.add(value.value)
    return names


def bound_names(statement: cst.CSTNode) -> Set[str]:
    """Names a statement may bind: none for expression statements, every name it uses otherwise."""
    if all(isinstance(part, cst.Expr) for part in statement_parts(statement)):
        return set()
    return names_in(statement)


def call_argument_names(call: cst.Call) -> Set[str]:
    return set().union(*(names_in(arg.value) for arg in call.args)) if call.args else set()


def receiver_of(call: cst.Call) -> Optional[cst.BaseExpression]:
    return call.func.value if isinstance(call.func, cst.Attribute) else None


def statement_parts(statement: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """A statement line's small statements; a compound statement is its own part."""
    return statement.body if isinstance(statement, cst.SimpleStatementLine) else [statement]


def read_later(model: SourceModel, names: Set[str], statement: cst.CSTNode) -> bool:
    """Whether a later statement can read one of `names` as they were left after `statement`
    (a small or compound statement): the rest of each enclosing block, the next iteration of each
    enclosing loop, up to the function. A plain assignment before any read ends a name's life."""
    if not names:
        return False
    live = set(names)
    current: cst.CSTNode = statement
    while True:
        holder = model.parent(current) if isinstance(current, cst.BaseSmallStatement) else None
        line = holder if isinstance(holder, cst.SimpleStatementLine) else current
        block = model.parent(line)
        if block is None:
            return False
        if isinstance(holder, cst.SimpleStatementLine):
            rest_of_line = list(holder.body)[next(i for i, s in enumerate(holder.body) if s is current) + 1 :]
            if _reads_before_kill(rest_of_line, live):
                return True
        siblings = list(block.body) if isinstance(block, (cst.Module, cst.IndentedBlock, cst.SimpleStatementSuite)) else []
        position = next((i for i, s in enumerate(siblings) if s is line), len(siblings))
        if _reads_before_kill(siblings[position + 1 :], live):
            return True
        if not live:
            return False
        owner = model.owner(block)
        if owner is None or isinstance(owner, cst.Module):
            # Module level: any function of the module may read a global later.
            return bool(live & names_in(model.module))
        if isinstance(owner, (cst.FunctionDef, cst.ClassDef)):
            return False
        if isinstance(owner, LOOPS):
            # The next iteration: the loop's head, then its body from the top down to here again.
            head = owner.test if isinstance(owner, cst.While) else owner.iter
            if live & names_in(head):
                return True
            body = list(owner.body.body)
            if _reads_before_kill(body[: position + 1] if block is owner.body else body, set(live)):
                return True
            if owner.orelse is not None and live & names_in(owner.orelse):
                return True
        elif not isinstance(owner, (cst.If, cst.With)):
            # try/except/finally, match: what else of it runs afterwards is not followed.
            if live & names_in(owner):
                return True
        current = owner


def _reads_before_kill(statements: Sequence[cst.CSTNode], live: Set[str]) -> bool:
    """Reads of `live` names in order; a plain assignment of a name first removes it from `live`.
    Inside an `if` or a `with` the same holds for its own statements, but what an arm assigns
    does not end a name's life after it (the other arm may run)."""
    for statement in statements:
        if isinstance(statement, cst.If):
            if live & names_in(statement.test) or _reads_before_kill(_suite(statement.body), set(live)):
                return True
            orelse = statement.orelse
            if orelse is not None and _reads_before_kill([orelse] if isinstance(orelse, cst.If) else _suite(orelse.body), set(live)):
                return True
            continue
        if isinstance(statement, cst.With):
            if any(live & names_in(item) for item in statement.items) or _reads_before_kill(_suite(statement.body), set(live)):
                return True
            continue
        for part in statement_parts(statement):
            bound = assigned_names(part)
            value = getattr(part, "value", None) if bound is not None else None
            if live & names_in(value if value is not None else part):
                return True
            if bound is not None:
                live -= bound
            if not live:
                return False
    return False


def _suite(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    return body.body


def contains(node: cst.CSTNode, kinds: Tuple[type, ...]) -> bool:
    """Whether a node of one of `kinds` sits anywhere inside `node` (nested functions aside)."""
    found = False

    class _Finder(cst.CSTVisitor):
        def on_visit(self, inner: cst.CSTNode) -> bool:
            nonlocal found
            if isinstance(inner, kinds):
                found = True
            return not found and not (inner is not node and isinstance(inner, SCOPES))

    node.visit(_Finder())
    return found


def called_names(node: cst.CSTNode) -> Dict[str, int]:
    """Dotted names of the calls inside `node`, with how often each is called."""
    counts: Dict[str, int] = {}

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            name = dotted(call.func)
            if name is not None:
                counts[name] = counts.get(name, 0) + 1

    node.visit(_Calls())
    return counts
