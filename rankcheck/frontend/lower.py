"""Lowering: a libcst tree to the summary IR (`rankcheck.program.ir`), one pure function per module.

`summarize_source(text, path, module) -> ModuleSummary`. One libcst parse and one position pass
per module; names are resolved from the module's own imports and definitions (`scopes`). Nothing
here knows the rest of the project or the catalog: the result depends on the text, the module
name and the import map (what the file's own source root provides under other names, usually
nothing) only, which is what makes it cacheable by content hash.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Set, Tuple, cast

import libcst as cst

from rankcheck.frontend.guard import too_complex_to_parse
from rankcheck.frontend.parse import parse_module
from rankcheck.frontend.positions import Range, node_ranges
from rankcheck.frontend.scopes import BindingCollector, ImportMap, Scope, dotted_name
from rankcheck.frontend.suppressions import parse_suppressions
from rankcheck.program.ir import (
    ASSIGN,
    ATTR,
    ATTR_METHOD,
    AUGASSIGN,
    BOOL,
    CALL,
    CALLED_VALUE,
    CEIL,
    CMP,
    COMP,
    CONST,
    DEF,
    DICT,
    ENVIRON,
    EXIT,
    EXPR,
    FOR,
    GLOBAL,
    GLOBAL_CALL,
    IF,
    IFEXP,
    ITEM_STORE,
    LOCAL_CALL,
    MATCH,
    MODULE_FUNCTION,
    NAME,
    NAME_TARGET,
    NOT,
    OP,
    OR_PATTERN,
    OTHER_PATTERN,
    OTHER_TARGET,
    PADDED,
    PRODUCT,
    QUAL,
    SELF_METHOD,
    SELFATTR,
    SLICE,
    SPREAD,
    SUBSCRIPT,
    SUPER_METHOD,
    TRIMMED,
    TRY,
    TUPLE,
    UNPACK,
    VALUE,
    WALRUS,
    WHILE,
    WILD,
    WITH,
    YIELD,
    Body,
    CallSite,
    ClassSummary,
    Expr,
    FlagValue,
    FunctionSummary,
    GuardInfo,
    GuardKeyword,
    ModuleSummary,
    ParseProblem,
    Ref,
    Span,
    Stmt,
    guard_head,
    nested_self_attribute,
    statements,
)

if TYPE_CHECKING:
    from rankcheck.frontend.reparse import RecentParses

TEXT_LIMIT = 80
# A condition is kept longer: evidence cuts it around its rank part (program.ir.cut_around), which
# only the interpreter knows.
CONDITION_LIMIT = 400

_LINE_END = re.compile(r"\r\n?|\n")
_FLAG_CONSTANTS: Dict[str, Optional[bool]] = {"True": True, "False": False, "None": None}


def _negative_integer(node: cst.BaseExpression) -> Optional[int]:
    """The value of `-1` and the like as written (a rank that says "no process group")."""
    if type(node) is cst.UnaryOperation and isinstance(node.operator, cst.Minus) and type(node.expression) is cst.Integer:
        return -int(node.expression.evaluated_value)
    return None


def _target_names(target: cst.BaseExpression) -> List[str]:
    """The names a `for` target binds (`x`, `(k, v)`, `[a, *rest]`)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for el in target.elements for name in _target_names(el.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


_OPTIONAL_WRAPPERS = frozenset(["Optional", "typing.Optional", "Union", "typing.Union"])


def annotated_class(node: cst.BaseExpression) -> Optional[List[str]]:
    """The one class an annotation names, as its dotted parts: `DDP`, `pl.Trainer`, the string
    `"pl.Trainer"`, and the same inside `Optional[...]`, `Union[X, None]` or `X | None`; None for
    anything else (a union of two classes, a generic, a literal)."""
    if isinstance(node, cst.SimpleString):
        try:
            text = node.evaluated_value
        except Exception:
            return None
        if not isinstance(text, str) or len(text) > 200:
            return None
        try:
            node = cst.parse_expression(text.strip())
        except Exception:
            return None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        sides = [side for side in (node.left, node.right) if not (isinstance(side, cst.Name) and side.value == "None")]
        return annotated_class(sides[0]) if len(sides) == 1 else None
    if isinstance(node, cst.Subscript):
        wrapper = dotted_name(node.value)
        if not wrapper or ".".join(wrapper) not in _OPTIONAL_WRAPPERS:
            return None
        inner = [el.slice.value for el in node.slice if isinstance(el.slice, cst.Index)]
        inner = [el for el in inner if not (isinstance(el, cst.Name) and el.value == "None")]
        return annotated_class(inner[0]) if len(inner) == 1 else None
    return dotted_name(node)


def _shorten(text: str, limit: int = TEXT_LIMIT) -> str:
    """Code quoted in a message, on one line: comments inside brackets out, whitespace collapsed."""
    if "#" in text and "\n" in text:
        text = _without_comments(text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _without_comments(code: str) -> str:
    """`code` less its comments (a `#` in a string stays); as it was if it does not tokenize."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return code
    comments = [t for t in tokens if t.type == tokenize.COMMENT]
    if not comments:
        return code
    lines = code.split("\n")
    for token in reversed(comments):  # from the end: earlier columns stay where they are
        row, start = token.start
        _, end = token.end
        line = lines[row - 1]
        lines[row - 1] = line[:start] + line[end:]
    return "\n".join(lines)


class _FunctionBuilder:
    def __init__(self, owner: _ModuleBuilder, scope: Scope, qualname: str) -> None:
        self.owner = owner
        self.scope = scope
        self.qualname = qualname
        self.calls: List[CallSite] = []
        self.is_generator = False

    # -- helpers
    def span(self, node: cst.CSTNode) -> Span:
        return self.owner.span(node)

    def text(self, node: cst.CSTNode) -> str:
        return _shorten(self.owner.code_for(node))

    def guard(self, head_node: cst.CSTNode, test: cst.BaseExpression, keyword: GuardKeyword) -> GuardInfo:
        condition = _shorten(self.owner.code_for(test), CONDITION_LIMIT)
        return GuardInfo(span=self.span(head_node), head=guard_head(keyword, condition), condition=condition, keyword=keyword)

    # -- expressions
    def expr(self, node: Optional[cst.BaseExpression]) -> Expr:
        if node is None:
            return CONST.make(None)
        # The parser builds nodes of exactly these classes: comparing the type is the same test as
        # isinstance(), without the slow path libcst's abstract base classes take on every miss.
        if type(node) is cst.Name:
            if node.value in ("True", "False", "None"):
                return CONST.make({"True": True, "False": False, "None": None}[node.value])
            return NAME.make(node.value)
        if type(node) is cst.Integer:
            try:
                return CONST.make(int(node.value.replace("_", ""), 0))
            except ValueError:
                return CONST.make(None)
        if type(node) is cst.SimpleString:
            try:
                return CONST.make(node.evaluated_value)
            except Exception:
                return CONST.make(None)
        if type(node) is cst.Float:
            try:
                return CONST.make(float(node.value.replace("_", "")))
            except ValueError:
                return CONST.make(None)
        if isinstance(node, (cst.Imaginary, cst.ConcatenatedString, cst.FormattedString)):
            parts = []
            if type(node) is cst.FormattedString:
                for p in node.parts:
                    if isinstance(p, cst.FormattedStringExpression):
                        parts.append(self.expr(p.expression))
            return OP.make(tuple(parts)) if parts else CONST.make(None)
        if type(node) is cst.Attribute:
            return ATTR.make(self.expr(node.value), node.attr.value)
        if type(node) is cst.Call:
            return self.call(node)
        if type(node) is cst.Comparison:
            ops = tuple(self._cmp_op(t.operator) for t in node.comparisons)
            compared = (self.expr(node.left),) + tuple(self.expr(t.comparator) for t in node.comparisons)
            return CMP.make(ops, compared)
        if type(node) is cst.UnaryOperation:
            if isinstance(node.operator, cst.Not):
                return NOT.make(self.expr(node.expression))
            inner = self.expr(node.expression)
            if isinstance(node.operator, cst.Minus) and inner[0] == "const" and isinstance(inner[1], int):
                return CONST.make(-inner[1])
            return OP.make((inner,))
        if type(node) is cst.BooleanOperation:
            op = "and" if isinstance(node.operator, cst.And) else "or"
            operands: List[Expr] = []
            self._flatten_bool(node, op, operands)
            return BOOL.make(op, tuple(operands), self.guard(node, node, GuardKeyword.OPERAND))
        if type(node) is cst.IfExp:
            return IFEXP.make(self.expr(node.test), self.expr(node.body), self.expr(node.orelse), self.guard(node, node.test, GuardKeyword.IF))
        if type(node) is cst.Subscript:
            env_var = self._environ_subscript(node)
            if env_var is not None:
                return ENVIRON.make(env_var)
            index = [self.expr(e.slice.value) for e in node.slice if isinstance(e.slice, cst.Index)]
            slices: List[Tuple[Optional[Expr], ...]] = []
            for e in node.slice:
                if isinstance(e.slice, cst.Slice):
                    bounds = self._slice_bounds(e.slice.lower, e.slice.upper, e.slice.step)
                    slices.append(bounds)
                    index.extend(x for x in bounds[:3] if x is not None)
            return SUBSCRIPT.make(self.expr(node.value), tuple(index), bool(slices), tuple(slices))
        if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
            values = tuple(self.expr(el.value) for el in node.elements)
            if all(v[0] == "const" for v in values):
                return CONST.make(tuple(v[1] for v in values))
            spreads = [i for i, el in enumerate(node.elements) if isinstance(el, cst.StarredElement)]
            if isinstance(node, cst.Set):
                return OP.make(values)
            return SPREAD.make(values, spreads[0]) if spreads else TUPLE.make(values)
        if type(node) is cst.Dict:
            entries: List[Tuple[Optional[Expr], Expr]] = []
            for el in node.elements:
                if isinstance(el, cst.DictElement):
                    entries.append((self.expr(el.key), self.expr(el.value)))
                else:
                    entries.append((None, self.expr(el.value)))
            return DICT.make(tuple(entries))
        if type(node) is cst.BinaryOperation:
            if _trims_to_a_multiple(node, self.owner.code_for):
                remainder = cast(cst.BinaryOperation, node.right)
                return TRIMMED.make((self.expr(node.left), self.expr(remainder.left), self.expr(remainder.right)))
            padding = _padding_to_a_length(node, self.owner.code_for)
            if padding is not None:
                fill, length = padding
                return PADDED.make((self.expr(node.left), self.expr(fill), self.expr(length)))
            pair = (self.expr(node.left), self.expr(node.right))
            combined = PRODUCT.make(pair) if isinstance(node.operator, cst.Multiply) else OP.make(pair)
            return CEIL.make(combined) if _rounds_up(node) else combined
        if type(node) is cst.NamedExpr:
            return WALRUS.make(node.target.value if isinstance(node.target, cst.Name) else "", self.expr(node.value))
        if type(node) is cst.Await:
            return self.expr(node.expression)
        if type(node) is cst.Yield:
            # The point where a @contextmanager hands control to the `with` body.
            self.is_generator = True
            value = node.value
            if isinstance(value, cst.From):
                return YIELD.make(self.expr(value.item))
            return YIELD.make(self.expr(value) if value is not None else CONST.make(None))
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            return self._comprehension(node)
        if type(node) is cst.Lambda:
            return OP.make(())
        if type(node) is cst.StarredElement:
            return self.expr(node.value)
        return OP.make(())

    def _slice_bounds(
        self, lower: Optional[cst.BaseExpression], upper: Optional[cst.BaseExpression], step: Optional[cst.BaseExpression]
    ) -> Tuple[Optional[Expr], ...]:
        """(lower, upper, step, width) of `x[lower:upper:step]` or `slice(lower, upper, step)`, each
        lowered once. width: the part of `upper` that is the slice's length whatever `lower` is,
        when the bounds are written so (`a:a + n`, `r * n:(r + 1) * n`, `:n`), else None."""
        bounds = tuple(self.expr(x) if x is not None else None for x in (lower, upper, step))
        width: Optional[Expr] = None
        if upper is not None:
            if lower is None:
                width = bounds[1]
            elif bounds[1] is not None:
                factors = _width_factors(lower, upper, bounds[1], self.owner.code_for)
                if factors is not None:
                    width = factors[0] if len(factors) == 1 else OP.make(tuple(factors))
        return bounds + (width,)

    def _comprehension(self, node: cst.BaseExpression) -> Expr:
        """("comp", ((target, iterable, conditions), ...), elements): a filter decides how many."""
        generators = []
        comp = node.for_in  # type: ignore[attr-defined]
        # The comprehension's own variables are local to it: `x.sum()` in `[x for x in batch if
        # x.sum() > 0]` calls a method of the loop variable, not of a global named `x`.
        scope = self.scope
        added: List[str] = []
        shadowed: Dict[str, str] = {}
        try:
            while comp is not None:
                iterable = self.expr(comp.iter)
                for name in _target_names(comp.target):
                    if name in scope.aliases:
                        shadowed[name] = scope.aliases.pop(name)
                    if name not in scope.locals:
                        scope.locals.add(name)
                        added.append(name)
                target = self.target(comp.target)
                conditions = tuple(self.expr(cond.test) for cond in comp.ifs)
                generators.append((target, iterable, conditions))
                comp = comp.inner_for_in
            if isinstance(node, cst.DictComp):
                elements: Tuple[Expr, ...] = (self.expr(node.key), self.expr(node.value))
            else:
                elements = (self.expr(node.elt),)  # type: ignore[attr-defined]
        finally:
            scope.locals.difference_update(added)
            scope.aliases.update(shadowed)
        return COMP.make(tuple(generators), elements)

    def _flatten_bool(self, node: cst.BooleanOperation, op: str, out: List[Expr]) -> None:
        """`a and b and c` as one operand list (libcst nests it as a binary tree)."""
        for side in (node.left, node.right):
            if isinstance(side, cst.BooleanOperation) and isinstance(side.operator, cst.And) == (op == "and"):
                self._flatten_bool(side, op, out)
            else:
                out.append(self.expr(side))

    @staticmethod
    def _cmp_op(operator: cst.BaseCompOp) -> str:
        return {
            cst.Equal: "==",
            cst.NotEqual: "!=",
            cst.LessThan: "<",
            cst.LessThanEqual: "<=",
            cst.GreaterThan: ">",
            cst.GreaterThanEqual: ">=",
            cst.In: "in",
            cst.NotIn: "not in",
            cst.Is: "is",
            cst.IsNot: "is not",
        }.get(type(operator), "?")

    def _qualify(self, node: cst.BaseExpression) -> Optional[str]:
        """The dotted global a Name/Attribute chain stands for, or None."""
        dotted = dotted_name(node)
        if not dotted:
            return None
        kind, value = self.scope.resolve(dotted[0])
        if kind != "qual":
            return None
        return ".".join([value] + dotted[1:])

    def _environ_subscript(self, node: cst.Subscript) -> Optional[str]:
        if self._qualify(node.value) == "os.environ" and len(node.slice) == 1:
            sl = node.slice[0].slice
            if isinstance(sl, cst.Index) and isinstance(sl.value, cst.SimpleString):
                try:
                    return str(sl.value.evaluated_value)
                except Exception:
                    return None
        return None

    def callee_ref(self, func: cst.BaseExpression) -> Ref:
        if isinstance(func, cst.Name):
            kind, value = self.scope.resolve(func.value)
            if kind == "qual":
                return QUAL.make(value)
            return LOCAL_CALL.make(value) if kind == "local" else GLOBAL_CALL.make(value)
        if isinstance(func, cst.Attribute):
            base = func.value
            if isinstance(base, cst.Name) and base.value == self.scope_first_param():
                return SELF_METHOD.make(func.attr.value)
            if isinstance(base, cst.Call) and isinstance(base.func, cst.Name) and base.func.value == "super":
                return SUPER_METHOD.make(func.attr.value)
            qual = self._qualify(func)
            if qual is not None:
                return QUAL.make(qual)
            return ATTR_METHOD.make(self.expr(base), func.attr.value)
        return CALLED_VALUE.make(self.expr(func))

    def scope_first_param(self) -> Optional[str]:
        scope: Optional[Scope] = self.scope
        while scope is not None:
            if scope.first_param:
                return scope.first_param
            scope = scope.parent
        return None

    def call(self, node: cst.Call) -> Expr:
        func = node.func
        callee = self.callee_ref(func)
        # os.environ.get("RANK") / os.getenv("RANK") read a launcher variable.
        if callee[0] == "qual" and callee[1] in ("os.environ.get", "os.getenv") and node.args:
            first = node.args[0].value
            if isinstance(first, cst.SimpleString):
                try:
                    var = str(first.evaluated_value)
                except Exception:
                    var = None
                if var is not None:
                    for extra in node.args[1:]:
                        self.expr(extra.value)
                    return ENVIRON.make(var)
        # `getattr(args, "local_rank", -1)`: the attribute read `args.local_rank`, whatever the
        # default for an object without it (a constant, alike on every rank).
        if callee == QUAL.make("getattr") and 2 <= len(node.args) <= 3 and all(a.keyword is None and not a.star for a in node.args):
            name = node.args[1].value
            if type(name) is cst.SimpleString:
                try:
                    attr = name.evaluated_value
                except Exception:
                    attr = None
                if isinstance(attr, str) and attr.isidentifier():
                    base = self.expr(node.args[0].value)
                    for extra in node.args[2:]:
                        self.expr(extra.value)
                    return ATTR.make(base, attr)
        if callee == QUAL.make("math.ceil"):
            return CEIL.make(self._plain_call(node, callee))
        # `slice(lo, hi)`: a slice object, its length known as a slice's is (`x[process_slice]`).
        # `slice(None)`, `slice(n)`: one argument is the upper bound.
        if callee == QUAL.make("slice") and 1 <= len(node.args) <= 3 and all(a.keyword is None and not a.star for a in node.args):
            parts = [a.value for a in node.args]
            if len(parts) == 1:
                return SLICE.make(*self._slice_bounds(None, parts[0], None))
            return SLICE.make(*self._slice_bounds(parts[0], parts[1], parts[2] if len(parts) == 3 else None))
        return self._plain_call(node, callee)

    def _plain_call(self, node: cst.Call, callee: Ref) -> Expr:
        # Arguments are evaluated before the call: their calls come first in program order.
        # (callee_ref already converted the base of `obj.m()` and any other called expression)
        args: List[Expr] = []
        arg_texts: List[str] = []
        kwargs: List[Tuple[str, Expr]] = []
        kwarg_texts: List[Tuple[str, str]] = []
        has_star = False
        spreads: List[Expr] = []
        for arg in node.args:
            value = self.expr(arg.value)
            if arg.star:
                has_star = True
                spreads.append(value)
                continue
            if arg.keyword is not None:
                kwargs.append((arg.keyword.value, value))
                kwarg_texts.append((arg.keyword.value, self.text(arg.value)))
            else:
                args.append(value)
                arg_texts.append(self.text(arg.value))
        index = len(self.calls)
        self.calls.append(
            CallSite(
                index=index,
                span=self.span(node),
                callee=callee,
                text=self.text(node.func),
                args=tuple(args),
                kwargs=tuple(kwargs),
                arg_texts=tuple(arg_texts),
                kwarg_texts=tuple(kwarg_texts),
                has_star=has_star,
                spreads=tuple(spreads),
            )
        )
        return CALL.make(index)

    # -- assignment targets
    def target(self, node: cst.BaseExpression) -> Tuple:
        if isinstance(node, cst.Name):
            return NAME_TARGET.make(node.value)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == self.scope_first_param():
            return SELFATTR.make(node.attr.value)
        if isinstance(node, (cst.Tuple, cst.List)):
            return UNPACK.make(tuple(self.target(el.value) for el in node.elements))
        if isinstance(node, cst.StarredElement):
            return self.target(node.value)
        return OTHER_TARGET.make(self.expr(node))

    # -- statements
    def body(self, nodes: Sequence[cst.CSTNode]) -> Body:
        out: List[Stmt] = []
        for node in nodes:
            self.statement(node, out)
        return tuple(out)

    def block(self, suite: cst.BaseSuite) -> Body:
        if isinstance(suite, cst.IndentedBlock):
            return self.body(suite.body)
        if isinstance(suite, cst.SimpleStatementSuite):
            return self.body(suite.body)
        return ()

    def statement(self, node: cst.CSTNode, out: List[Stmt]) -> None:
        if type(node) is cst.SimpleStatementLine:
            for small in node.body:
                self.statement(small, out)
            return
        if type(node) is cst.Expr:
            out.append(EXPR.make(self.expr(node.value), self.span(node)))
        elif type(node) is cst.Assign and isinstance(node.value, cst.Lambda) and self._lambda_alias(node):
            name = cst.ensure_type(node.targets[0].target, cst.Name).value
            self.owner.lambda_function(name, node.value, self.scope, self.qualname_prefix())
        elif type(node) is cst.Assign:
            value = self.expr(node.value)
            out.append(ASSIGN.make(tuple(self.target(t.target) for t in node.targets), value, self.span(node)))
        elif type(node) is cst.AnnAssign:
            if node.value is not None:
                out.append(ASSIGN.make((self.target(node.target),), self.expr(node.value), self.span(node)))
        elif type(node) is cst.AugAssign:
            value = self.expr(node.value)
            op = _AUG_OPERATORS.get(type(node.operator), "?")
            out.append(AUGASSIGN.make(self.target(node.target), value, self.span(node), op))
        elif type(node) is cst.Return:
            out.append(EXIT.make("return", self.expr(node.value) if node.value else None, self.span(node), "return"))
        elif type(node) is cst.Continue:
            out.append(EXIT.make("continue", None, self.span(node), "continue"))
        elif type(node) is cst.Break:
            out.append(EXIT.make("break", None, self.span(node), "break"))
        elif type(node) is cst.Raise:
            raised = self.expr(node.exc) if node.exc is not None else None
            out.append(EXIT.make("raise", raised, self.span(node), self.text(node)))
        elif type(node) is cst.Assert:
            test = self.expr(node.test)
            info = self.guard(node, node.test, GuardKeyword.ASSERT)
            failure = EXIT.make("raise", None, self.span(node), info.head)
            out.append(IF.make(NOT.make(test), (failure,), (), info))
        elif type(node) is cst.If:
            out.append(self._if(node, GuardKeyword.IF))
        elif type(node) is cst.While:
            test = self.expr(node.test)
            info = self.guard(node, node.test, GuardKeyword.WHILE)
            out.append(WHILE.make(test, self.block(node.body), self.block(node.orelse.body) if node.orelse else (), info))
        elif type(node) is cst.For:
            iterable = self.expr(node.iter)
            info = GuardInfo(self.span(node), f"for {self.text(node.target)} in {self.text(node.iter)}:", self.text(node.iter), GuardKeyword.FOR)
            out.append(FOR.make(self.target(node.target), iterable, self.block(node.body), self.block(node.orelse.body) if node.orelse else (), info))
        elif type(node) is cst.With:
            items = []
            for item in node.items:
                value = self.expr(item.item)
                items.append((value, self.target(item.asname.name) if item.asname is not None else None))
            out.append(WITH.make(tuple(items), self.block(node.body), self.span(node)))
        elif isinstance(node, (cst.Try, cst.TryStar)):
            handlers = []
            for h in node.handlers:
                type_text = self.text(h.type) if h.type is not None else ""
                bound = h.name.name.value if h.name is not None and isinstance(h.name.name, cst.Name) else None
                caught = self.expr(h.type) if h.type is not None else None
                handlers.append((type_text, bound, self.block(h.body), self.span(h), caught))
            orelse = self.block(node.orelse.body) if node.orelse else ()
            final = self.block(node.finalbody.body) if node.finalbody else ()
            out.append(TRY.make(self.block(node.body), tuple(handlers), orelse, final))
        elif type(node) is cst.Match:
            out.append(self._match(node))
        elif type(node) is cst.FunctionDef:
            qual = self.owner.function(node, self.scope, self.qualname_prefix())
            out.append(DEF.make(node.name.value, qual))
        elif type(node) is cst.ClassDef:
            self.owner.klass(node, self.scope, self.qualname_prefix())
        elif type(node) is cst.Global:
            out.append(GLOBAL.make(tuple(n.name.value for n in node.names)))
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            self.owner.note_import(node)  # its bindings are the scope's (scopes.BindingCollector)
        elif isinstance(node, (cst.Del, cst.Pass, cst.Nonlocal)):
            pass
        # Anything else (type aliases, ...) carries nothing the analysis reads.

    def _lambda_alias(self, node: cst.Assign) -> bool:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return False
        kind, value = self.scope.resolve(node.targets[0].target.value)
        return kind == "qual" and value == f"{self.qualname_prefix()}.{node.targets[0].target.value}"

    def qualname_prefix(self) -> str:
        if self.qualname.endswith("." + MODULE_FUNCTION):
            return self.qualname[: -len(MODULE_FUNCTION) - 1]
        return self.qualname

    def _if(self, node: cst.If, keyword: GuardKeyword) -> Stmt:
        test = self.expr(node.test)
        info = self.guard(node, node.test, keyword)
        body = self.block(node.body)
        orelse: Body = ()
        if isinstance(node.orelse, cst.If):
            orelse = (self._if(node.orelse, GuardKeyword.ELIF),)
        elif isinstance(node.orelse, cst.Else):
            orelse = self.block(node.orelse.body)
        return IF.make(test, body, orelse, info)

    def _match(self, node: cst.Match) -> Stmt:
        subject = self.expr(node.subject)
        cases = []
        for case in node.cases:
            pattern = self._pattern(case.pattern)
            guard = self.expr(case.guard) if case.guard is not None else None
            text = self.text(case.pattern)
            info = GuardInfo(self.span(case), f"match {self.text(node.subject)}: case {text}:", f"{self.text(node.subject)} matches {text}", GuardKeyword.MATCH)
            cases.append((pattern, guard, self.block(case.body), info))
        return MATCH.make(subject, tuple(cases))

    def _pattern(self, pattern: cst.MatchPattern) -> Tuple:
        if isinstance(pattern, cst.MatchValue):
            return VALUE.make(self.expr(pattern.value))
        if isinstance(pattern, cst.MatchSingleton):
            return VALUE.make(self.expr(pattern.value))
        if isinstance(pattern, cst.MatchAs):
            if pattern.pattern is None:
                return WILD.make()
            return self._pattern(pattern.pattern)
        if isinstance(pattern, cst.MatchOr):
            return OR_PATTERN.make(tuple(self._pattern(p.pattern) for p in pattern.patterns))
        return OTHER_PATTERN.make()


class _ModuleBuilder:
    def __init__(self, module: str, is_package: bool, cst_module: cst.Module, ranges: Dict[int, Range], text: Optional[str] = None,
                 import_map: ImportMap = ()) -> None:
        self.module_name = module
        self.is_package = is_package
        self.import_map = import_map
        self.positions = ranges
        self.cst_module = cst_module
        # `:=` binds inside expressions, which the statement walk of BindingCollector skips
        self.has_walrus = text is None or ":=" in text
        self.text = text
        self.line_starts: Optional[List[int]] = None
        self.functions: List[FunctionSummary] = []
        self.classes: List[ClassSummary] = []
        self.absolute_imports: List[Tuple[str, int]] = []  # ModuleSummary.absolute_imports

    def note_import(self, node: cst.Import | cst.ImportFrom) -> None:
        line = self.span(node).line
        if isinstance(node, cst.Import):
            for alias in node.names:
                dotted = dotted_name(alias.name)
                if dotted:
                    self.absolute_imports.append((dotted[0], line))
        elif not node.relative and node.module is not None:
            dotted = dotted_name(node.module)
            if dotted:
                self.absolute_imports.append((dotted[0], line))

    def span(self, node: cst.CSTNode) -> Span:
        pos = self.positions.get(id(node))
        if pos is None:
            return Span(1, 1, 1, 1)
        return Span(pos[0], pos[1] + 1, pos[2], pos[3] + 1)

    def code_for(self, node: cst.CSTNode) -> str:
        # An expression's code, less its parentheses, is exactly the source between the ends of
        # its syntactic range: slicing the text is far cheaper than generating the code again.
        if not isinstance(node, cst.BaseExpression) or node.lpar:
            return self.cst_module.code_for_node(node)
        source = self._source_between_ends(node)
        return self.cst_module.code_for_node(node) if source is None else source

    def _source_between_ends(self, node: cst.CSTNode) -> Optional[str]:
        """The source text from the start to the end of `node`'s syntactic range, or None."""
        pos = self.positions.get(id(node))
        if pos is None or self.text is None:
            return None
        if self.line_starts is None:
            self.line_starts = [0] + [m.end() for m in _LINE_END.finditer(self.text)]
        starts = self.line_starts
        return self.text[starts[pos[0] - 1] + pos[1] : starts[pos[2] - 1] + pos[3]]

    def _scope_for(self, body: Sequence[cst.CSTNode], qualname: str, parent: Optional[Scope], is_module: bool,
                   params: Sequence[str] = ()) -> Scope:
        scope = Scope(qualname, parent, is_module=is_module)
        # The parameters are this function's variables before any alias is resolved: `model =
        # self.model` aliases nothing global (`self` is not a module), nor does `lr = args.lr`.
        scope.locals.update(params)
        collector = BindingCollector(self.module_name, self.is_package, self.import_map)
        if self.has_walrus:
            # Only a statement whose own text holds `:=` needs the generic (costly) visit.
            for stmt in body:
                source = self._source_between_ends(stmt)
                if source is None or ":=" in source:
                    stmt.visit(collector)
                else:
                    collector.collect([stmt])
        else:
            collector.collect(body)
        prefix = qualname[: -len(MODULE_FUNCTION) - 1] if is_module else qualname
        for name in collector.defs:
            scope.aliases[name] = f"{prefix}.{name}"
        for name, target in collector.imports:
            scope.aliases[name] = target
        for name in collector.assigned:
            # A name assigned in this body is a variable here, even if it was also imported.
            scope.aliases.pop(name, None)
            scope.locals.add(name)
        # `name = other_global` assigned once: an alias to that global (e.g. `reduce = dist.all_reduce`).
        for name, value in collector.simple_aliases.items():
            if collector.assigned.get(name) != 1:
                continue
            if isinstance(value, cst.Lambda):
                # `name = lambda ...` assigned once: a function named after its variable
                scope.aliases[name] = f"{prefix}.{name}"
                scope.locals.discard(name)
                continue
            dotted = dotted_name(value)
            if not dotted or dotted[0] in ("None", "True", "False"):
                continue
            kind, resolved = scope.resolve(dotted[0]) if dotted[0] != name else ("local", name)
            if kind == "qual":
                scope.aliases[name] = ".".join([resolved] + dotted[1:])
                scope.locals.discard(name)
        return scope

    def module(self) -> Tuple[Scope, FunctionSummary]:
        qual = f"{self.module_name}.{MODULE_FUNCTION}"
        scope = self._scope_for(self.cst_module.body, qual, None, is_module=True)
        builder = _FunctionBuilder(self, scope, qual)
        body = builder.body(self.cst_module.body)
        summary = FunctionSummary(
            qualname=qual,
            name=MODULE_FUNCTION,
            module=self.module_name,
            class_qualname=None,
            params=(),
            span=Span(1, 1, 1, 1),
            body=body,
            calls=tuple(builder.calls),
        )
        self.functions.append(summary)
        return scope, summary

    def _params(self, params: cst.Parameters) -> List[str]:
        names = [p.name.value for p in (*params.posonly_params, *params.params)]
        if isinstance(params.star_arg, cst.Param):
            names.append(params.star_arg.name.value)
        names.extend(p.name.value for p in params.kwonly_params)
        if params.star_kwarg is not None:
            names.append(params.star_kwarg.name.value)
        return names

    def _param_types(self, params: cst.Parameters, scope: Scope) -> Tuple[Tuple[str, str], ...]:
        """The class each annotated parameter is declared to hold, as a dotted name resolved in the
        scope the `def` stands in (`accelerator: Accelerator` -> `accelerate.Accelerator`)."""
        return self._resolved_per_param(params, scope, lambda p: annotated_class(p.annotation.annotation) if p.annotation is not None else None)

    def _named_defaults(self, params: cst.Parameters, scope: Scope) -> Tuple[Tuple[str, str], ...]:
        """The parameters whose default is a name or an attribute of one (`test_type=
        is_torch_tensor`), as a dotted name resolved in the scope the `def` stands in."""

        def named(p: cst.Param) -> Optional[List[str]]:
            if p.default is None or (isinstance(p.default, cst.Name) and p.default.value in _FLAG_CONSTANTS):
                return None
            return dotted_name(p.default)

        return self._resolved_per_param(params, scope, named)

    def _resolved_per_param(
        self, params: cst.Parameters, scope: Scope, dotted_of: Callable[[cst.Param], Optional[List[str]]]
    ) -> Tuple[Tuple[str, str], ...]:
        """(parameter, dotted name) for each parameter `dotted_of` names something for, the name
        resolved where the `def` stands: through an import, or a global of this module."""
        found = []
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            resolved = self._resolved(dotted_of(p), scope)
            if resolved is not None:
                found.append((p.name.value, resolved))
        return tuple(found)

    def _resolved(self, dotted: Optional[List[str]], scope: Scope) -> Optional[str]:
        """A dotted name as the scope a `def` or class stands in binds it: through an import, or a
        global of this module; None for anything else (a local, a builtin)."""
        if not dotted:
            return None
        kind, value = scope.resolve(dotted[0])
        if kind == "qual":
            return ".".join([value] + dotted[1:])
        if kind == "global":
            return ".".join([self.module_name] + dotted)
        return None

    def _flag_defaults(self, params: cst.Parameters) -> Tuple[Tuple[str, FlagValue], ...]:
        """The parameters whose default is written `True`, `False` or `None`, or as a negative
        integer: what a call that leaves them out holds in them (`use_barriers=False`,
        `adapter_config=None`, `rank=-1`)."""
        found: List[Tuple[str, FlagValue]] = []
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            if isinstance(p.default, cst.Name) and p.default.value in _FLAG_CONSTANTS:
                found.append((p.name.value, _FLAG_CONSTANTS[p.default.value]))
            elif p.default is not None:
                negative = _negative_integer(p.default)
                if negative is not None:
                    found.append((p.name.value, negative))
        return tuple(found)

    def _decorator_names(self, node: cst.FunctionDef | cst.ClassDef, scope: Scope) -> Tuple[str, ...]:
        names = []
        for dec in node.decorators:
            expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
            dotted = dotted_name(expr)
            if dotted:
                kind, value = scope.resolve(dotted[0])
                names.append(".".join([value] + dotted[1:]) if kind == "qual" else ".".join(dotted))
            else:
                names.append(_shorten(self.code_for(expr)))
        return tuple(names)

    def function(self, node: cst.FunctionDef, parent: Scope, prefix: str, class_qualname: Optional[str] = None) -> str:
        qual = f"{prefix}.{node.name.value}"
        body_nodes = node.body.body
        params = self._params(node.params)
        scope = self._scope_for(body_nodes, qual, parent, is_module=False, params=params)
        for p in params:
            scope.locals.add(p)
            scope.aliases.pop(p, None)
        decorators = self._decorator_names(node, parent)
        is_static = any(d.endswith("staticmethod") for d in decorators)
        if class_qualname is not None and params and not is_static:
            scope.first_param = params[0]
            scope.class_qualname = class_qualname
        builder = _FunctionBuilder(self, scope, qual)
        body = builder.body(body_nodes)
        value_defaults = tuple((p.name.value, builder.expr(p.default))
                               for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
                               if p.default is not None and _computed(p.default))
        self.functions.append(
            FunctionSummary(
                qualname=qual,
                name=node.name.value,
                module=self.module_name,
                class_qualname=class_qualname,
                params=tuple(params),
                span=self.span(node.name),
                body=body,
                calls=tuple(builder.calls),
                value_defaults=value_defaults,
                decorators=decorators,
                is_generator=builder.is_generator,
                is_staticmethod=is_static,
                flag_defaults=self._flag_defaults(node.params),
                param_types=self._param_types(node.params, parent),
                named_defaults=self._named_defaults(node.params, parent),
                required=tuple(p.name.value for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params) if p.default is None),
                star_kwargs=node.params.star_kwarg.name.value if node.params.star_kwarg is not None else None,
            )
        )
        return qual

    def lambda_function(self, name: str, node: cst.Lambda, parent: Scope, prefix: str) -> str:
        qual = f"{prefix}.{name}"
        scope = Scope(qual, parent)
        params = self._params(node.params)
        scope.locals.update(params)
        builder = _FunctionBuilder(self, scope, qual)
        value = builder.expr(node.body)
        body = (EXIT.make("return", value, self.span(node.body), "return"),)
        self.functions.append(
            FunctionSummary(
                qualname=qual,
                name=name,
                module=self.module_name,
                class_qualname=None,
                params=tuple(params),
                span=self.span(node),
                body=body,
                calls=tuple(builder.calls),
            )
        )
        return qual

    def klass(self, node: cst.ClassDef, parent: Scope, prefix: str) -> str:
        qual = f"{prefix}.{node.name.value}"
        bases = []
        for arg in node.bases:
            dotted = dotted_name(arg.value)
            if dotted:
                kind, value = parent.resolve(dotted[0])
                bases.append(".".join([value] + dotted[1:]) if kind == "qual" else ".".join(dotted))
        class_scope = Scope(qual, parent)
        methods: List[Tuple[str, str]] = []
        body_nodes = node.body.body
        start = len(self.functions)
        for stmt in body_nodes:
            if isinstance(stmt, cst.FunctionDef):
                # methods resolve names in the enclosing (module) scope, not the class body
                methods.append((stmt.name.value, self.function(stmt, parent, qual, class_qualname=qual)))
            elif isinstance(stmt, cst.ClassDef):
                self.klass(stmt, class_scope, qual)
        if not any(name == "__init__" for name, _ in methods) and self._generates_init(node, parent):
            methods.append(("__init__", self._dataclass_init(node, parent, qual)))
        stores: Dict[str, List[str]] = {}
        mutations: Dict[str, List[Tuple[str, str]]] = {}
        for fn in self.functions[start:]:
            if fn.class_qualname != qual:
                continue
            for attr in _self_stores(fn):
                stores.setdefault(attr, []).append(fn.qualname)
            for attr, method in _self_method_calls(fn):
                mutations.setdefault(attr, []).append((method, fn.qualname))
        self.classes.append(
            ClassSummary(
                qualname=qual,
                name=node.name.value,
                module=self.module_name,
                bases=tuple(bases),
                methods=tuple(methods),
                self_stores=tuple((k, tuple(v)) for k, v in sorted(stores.items())),
                self_mutations=tuple((k, tuple(sorted(set(v)))) for k, v in sorted(mutations.items())),
                span=self.span(node.name),
            )
        )
        return qual

    def _generates_init(self, node: cst.ClassDef, scope: Scope) -> bool:
        """`@dataclass` (or `@dataclass(...)` without `init=False`) on a class that writes no
        `__init__`: Python writes one that stores each field."""
        for dec, name in zip(node.decorators, self._decorator_names(node, scope)):
            if name in _DATACLASS_DECORATORS:
                call = dec.decorator if isinstance(dec.decorator, cst.Call) else None
                return call is None or not any(
                    arg.keyword is not None and arg.keyword.value == "init" and isinstance(arg.value, cst.Name) and arg.value.value == "False"
                    for arg in call.args
                )
        return False

    def _dataclass_init(self, node: cst.ClassDef, scope: Scope, qual: str) -> str:
        """The `__init__` a dataclass gets: one parameter per field of its own body, in order
        (`pg: ProcessGroup`, `p: float = 0.9`), each stored on the instance (`self.pg = pg`); a
        sampler built with `TopPSampler(pg=parallel_context.tp_pg)` all-reduces on that group.
        (Fields a dataclass base declares come first in Python's; a positional call that fills
        them is bound here by keyword only, as the fields are named.)"""
        params: List[str] = ["self"]
        body: List[Tuple] = []
        flags: List[Tuple[str, FlagValue]] = []
        init = f"{qual}.__init__"
        builder = _FunctionBuilder(self, Scope(init, scope), init)  # field defaults are read in the class's scope
        value_defaults: List[Tuple[str, Expr]] = []
        types: List[Tuple[str, str]] = []
        required: List[str] = []
        for stmt in node.body.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if not isinstance(small, cst.AnnAssign) or not isinstance(small.target, cst.Name):
                    continue
                # `ClassVar[...]` and `InitVar[...]` (subscripted or not) are not stored fields.
                outer = small.annotation.annotation
                outer = outer.value if isinstance(outer, cst.Subscript) else outer
                if (dotted_name(outer) or [""])[-1] in ("ClassVar", "InitVar"):
                    continue
                field = small.target.value
                params.append(field)
                if small.value is None:
                    required.append(field)
                body.append(ASSIGN.make((SELFATTR.make(field),), NAME.make(field), self.span(small)))
                if isinstance(small.value, cst.Name) and small.value.value in _FLAG_CONSTANTS:
                    flags.append((field, _FLAG_CONSTANTS[small.value.value]))
                elif small.value is not None and _computed(small.value):
                    value_defaults.append((field, builder.expr(small.value)))
                held = self._resolved(annotated_class(small.annotation.annotation), scope)
                if held is not None:
                    types.append((field, held))
        self.functions.append(
            FunctionSummary(
                qualname=init,
                name="__init__",
                module=self.module_name,
                class_qualname=qual,
                params=tuple(params),
                span=self.span(node.name),
                body=tuple(body),
                calls=tuple(builder.calls),
                value_defaults=tuple(value_defaults),
                flag_defaults=tuple(flags),
                param_types=tuple(types),
                required=tuple(required),
            )
        )
        return init


def _computed(default: cst.BaseExpression) -> bool:
    """A default that computes its value (`int(os.environ["RANK"])`, `get_rank()`), not one
    written as a constant or a name (FunctionSummary.flag_defaults, named_defaults)."""
    return not isinstance(default, (cst.Name, cst.Attribute, cst.BaseNumber, cst.BaseString, cst.UnaryOperation, cst.Ellipsis))


# The decorators that write a class's `__init__` from its annotated fields.
_DATACLASS_DECORATORS = frozenset({"dataclasses.dataclass", "dataclass"})
_AUG_OPERATORS = {cst.AddAssign: "+", cst.SubtractAssign: "-", cst.MultiplyAssign: "*"}


def _self_method_calls(fn: FunctionSummary) -> Set[Tuple[str, str]]:
    """(attribute, method) for each `self.<attribute>.<method>(...)` a method calls, and
    (attribute, ITEM_STORE) for each item it stores into `self.<attribute>`."""
    if fn.is_staticmethod or not fn.params:
        return set()
    receiver = fn.params[0]
    found: Set[Tuple[str, str]] = set()
    for site in fn.calls:
        callee = site.callee
        if callee[0] == "attr" and callee[1][0] == "attr" and callee[1][1] == ("name", receiver):
            found.add((callee[1][2], callee[2]))
    for s in statements(fn.body):
        targets = s[1] if s[0] == "assign" else (s[1],) if s[0] == "augassign" else ()
        for t in targets:
            # `self.counts[key] += 1`: an item stored into the object's container.
            if t[0] == "other" and t[1][0] == "subscript" and t[1][1][0] == "attr" and t[1][1][1] == ("name", receiver):
                found.add((t[1][1][2], ITEM_STORE))
    return found


def _self_stores(fn: FunctionSummary) -> Set[str]:
    """The attributes a method stores into its receiver: `self.model = ...` ("model"), and one
    level into an object the receiver holds, `self.state.model = ...` ("state.model"), which the
    other methods read back as `self.state.model` (Expressions._attr)."""
    found: Set[str] = set()
    receiver = fn.params[0] if fn.params and not fn.is_staticmethod else None

    def targets(t: Tuple) -> None:
        if t[0] == "selfattr":
            found.add(t[1])
        elif t[0] == "unpack":
            for sub in t[1]:
                targets(sub)
        elif receiver is not None and t[0] == "other" and nested_self_attribute(t[1], receiver) is not None:
            found.add(cast(str, nested_self_attribute(t[1], receiver)))

    for s in statements(fn.body):
        if s[0] == "assign":
            for t in s[1]:
                targets(t)
        elif s[0] == "augassign":
            targets(s[1])
    return found


def _syntax_problem(text: str, exc: cst.ParserSyntaxError) -> ParseProblem:
    """Python's own parser words syntax errors better and places them more precisely than
    libcst's; use it when it agrees that the file is broken."""
    try:
        compile(text, "<rankcheck>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as py_exc:
        line = py_exc.lineno or 1
        column = py_exc.offset or 1
        return ParseProblem(f"syntax error: {py_exc.msg}", line, max(column, 1))
    except (ValueError, RecursionError, MemoryError):
        pass
    message = str(exc.message).replace("parser error: ", "")
    message = re.sub(r"^error at \d+:\d+: ", "", message)
    return ParseProblem(f"syntax error: {message}", exc.raw_line, exc.raw_column + 1)


def summarize_source(text: str, path: str, module: str, is_package: bool = False, parses: Optional[RecentParses] = None,
                     import_map: ImportMap = ()) -> ModuleSummary:
    """The pure per-module step: source text -> ModuleSummary (never raises on bad input).
    `parses` (the language server's) keeps the last tree of each path, so that an edited buffer
    is parsed again only where it changed (reparse.py); the summary is the same. `import_map`
    names the modules the file's absolute imports find in its own source root under another name
    (`scopes.find_from`, `driver.identity`): part of the input, like the module name."""
    suppressions = parse_suppressions(text)
    # Nesting or chains that libcst's native parser would crash on or take minutes over, and
    # files too large to analyse, are an RC001 before libcst sees them.
    too_complex = too_complex_to_parse(text)
    if too_complex is not None:
        return ModuleSummary(path, module, is_package, suppressions=suppressions, problem=too_complex)
    try:
        # libcst's parse; indentation Python accepts and libcst not is retried
        parsed, ranges = (parse_module(text), None) if parses is None else parses.parse(path, text)
    except cst.ParserSyntaxError as exc:
        return ModuleSummary(
            path=path,
            module=module,
            is_package=is_package,
            suppressions=suppressions,
            problem=_syntax_problem(text, exc),
        )
    except RecursionError:
        return ModuleSummary(path, module, is_package, suppressions=suppressions, problem=ParseProblem("file is nested too deeply to parse", 1, 1))
    try:
        if ranges is None:
            ranges = node_ranges(parsed)
        builder = _ModuleBuilder(module, is_package, parsed, ranges, text, import_map)
        scope, _ = builder.module()
        if parses is not None:
            parses.remember(path, text, parsed, ranges)
    except RecursionError:
        return ModuleSummary(path, module, is_package, suppressions=suppressions, problem=ParseProblem("file is nested too deeply to analyse", 1, 1))
    imports = tuple(sorted(scope.aliases.items()))
    return ModuleSummary(
        path=path,
        module=module,
        is_package=is_package,
        imports=imports,
        functions=tuple(builder.functions),
        classes=tuple(builder.classes),
        global_names=tuple(sorted(scope.locals)),
        suppressions=suppressions,
        absolute_imports=tuple(sorted(builder.absolute_imports, key=lambda item: item[1])),
    )


def _source(node: cst.BaseExpression, code_for: Callable[[cst.CSTNode], str]) -> str:
    """An expression's text without whitespace or outer parentheses, to compare two of them."""
    text = re.sub(r"\s+", "", code_for(node))
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1]
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _operands(node: cst.BaseExpression, operator: type) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, operator):
        return node.left, node.right
    return None


def _width_factors(
    lower: cst.BaseExpression, upper: cst.BaseExpression, upper_expr: Expr, code_for: Callable[[cst.CSTNode], str]
) -> Optional[List[Expr]]:
    """The lowered parts of `upper` whose product is the slice's width, whatever `lower` is:
    `a:a + n` and `a:n + a` give [n]; `r * n:(r + 1) * n` (either factor order, `1 + r` too)
    gives [n]; `r * n * k:(r + 1) * n * k` gives [n, k]. None for any other pair of bounds.
    `upper_expr` is `upper` lowered: an operator's operands, left then right."""
    if upper_expr[0] == "ceil":
        upper_expr = upper_expr[1]
    if upper_expr[0] not in ("op", "product") or len(upper_expr[1]) != 2:
        return None
    start = _source(lower, code_for)
    added = _operands(upper, cst.Add)
    if added is not None:
        for side in (0, 1):
            if _source(added[1 - side], code_for) == start:
                return [upper_expr[1][side]]
    high, low = _operands(upper, cst.Multiply), _operands(lower, cst.Multiply)
    if high is None or low is None:
        return None
    for side in (0, 1):
        for low_side in (0, 1):
            if _source(high[side], code_for) != _source(low[low_side], code_for):
                continue
            if _is_one_more(high[1 - side], low[1 - low_side], code_for):
                return [upper_expr[1][side]]
            inner = _width_factors(low[1 - low_side], high[1 - side], upper_expr[1][1 - side], code_for)
            if inner is not None:
                return inner + [upper_expr[1][side]]
    return None


def _is_one_more(node: cst.BaseExpression, index: cst.BaseExpression, code_for: Callable[[cst.CSTNode], str]) -> bool:
    """`node` is `index + 1` or `1 + index` (parentheses anywhere)."""
    added = _operands(node, cst.Add)
    if added is None:
        return False
    shown = _source(index, code_for)
    return any(
        _is_integer_one(one) and _source(other, code_for) == shown
        for one, other in (added, added[::-1])
    )


def _trims_to_a_multiple(node: cst.BinaryOperation, code_for: Callable[[cst.CSTNode], str]) -> bool:
    """`n - n % k`: n cut down to a multiple of k."""
    if not isinstance(node.operator, cst.Subtract):
        return False
    remainder = _operands(node.right, cst.Modulo)
    return remainder is not None and _source(remainder[0], code_for) == _source(node.left, code_for)


def _padding_to_a_length(
    node: cst.BinaryOperation, code_for: Callable[[cst.CSTNode], str]
) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """`items + [None] * (n - len(items))`: items padded to n, whatever their own count (the list
    idiom that evens out per-rank shares to an agreed longest). The fill display and n, else None."""
    if not isinstance(node.operator, cst.Add):
        return None
    repeated = _operands(node.right, cst.Multiply)
    if repeated is None:
        return None
    for fill, count in (repeated, repeated[::-1]):
        if not isinstance(fill, (cst.List, cst.Tuple)):
            continue
        difference = _operands(count, cst.Subtract)
        if difference is None:
            continue
        measured = difference[1]
        if (isinstance(measured, cst.Call) and isinstance(measured.func, cst.Name) and measured.func.value == "len"
                and len(measured.args) == 1 and _source(measured.args[0].value, code_for) == _source(node.left, code_for)):
            return fill, difference[0]
    return None


def _rounds_up(node: cst.BinaryOperation) -> bool:
    """A ceiling division: `(n + k - 1) // k`, `(n + (k - 1)) // k` (math.ceil is seen by name)."""
    if not isinstance(node.operator, cst.FloorDivide):
        return False
    minus = _operands(node.left, cst.Subtract)
    if minus is not None and _is_integer_one(minus[1]) and _operands(minus[0], cst.Add) is not None:
        return True
    plus = _operands(node.left, cst.Add)
    inner = _operands(plus[1], cst.Subtract) if plus is not None else None
    return inner is not None and _is_integer_one(inner[1])


def _is_integer_one(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Integer) and node.value == "1"
