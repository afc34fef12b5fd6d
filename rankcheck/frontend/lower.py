"""summarize: source text -> ModuleSummary, one pure function per module (DESIGN.md).

One libcst parse and one position pass per module; names are resolved here from the module's own
imports and definitions (far cheaper than libcst's scope/qualified-name providers), so the summary
says `torch.distributed.all_reduce` where the source said `dist.all_reduce`. Nothing here knows the
rest of the project or the catalog: the result depends on the text and the module name only, which
is what makes it cacheable by content hash.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from rankcheck.program.ir import (
    MODULE_FUNCTION,
    Body,
    CallSite,
    ClassSummary,
    Expr,
    FunctionSummary,
    GuardInfo,
    GuardKeyword,
    ModuleSummary,
    ParseProblem,
    Ref,
    Span,
    Stmt,
    Suppression,
)
from rankcheck.frontend.guard import (
    MAX_SOURCE_CHARS,
    parse_module,
    python_compiles,
    too_complex_to_parse,
)
from rankcheck.frontend.positions import Range, node_ranges

if TYPE_CHECKING:
    from rankcheck.frontend.reparse import RecentParses

TEXT_LIMIT = 80

_SUPPRESSION_RE = re.compile(
    r"#\s*(?:(?P<noqa>noqa)(?::\s*(?P<noqa_codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?"
    r"|rankcheck:\s*ignore(?:\[(?P<rc_codes>[^\]]*)\])?)",
    re.IGNORECASE,
)


# --------------------------------------------------------------------------------------------
# decoding and parse problems


def decode_source(data: bytes) -> Tuple[Optional[str], Optional[ParseProblem]]:
    """Decode file bytes the way Python does (BOM, coding cookie, else UTF-8)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if "encoding" in str(exc) and b"coding" in data[:400]:
            return None, ParseProblem(f"cannot decode file: {exc}", 1, 1)
        encoding = "utf-8"  # undecodable first lines: let the decoder say where
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        # (A file over the size limit is an RC001 anyway: compile() would peak at ~100x its size.)
        if isinstance(exc, UnicodeDecodeError) and len(data) <= MAX_SOURCE_CHARS and python_compiles(data):
            # CPython's tokenizer lets undecodable bytes through inside comments: so do we.
            return data.decode(encoding, errors="replace").lstrip("\ufeff"), None
        start = getattr(exc, "start", 0)
        line = data.count(b"\n", 0, start) + 1
        column = start - (data.rfind(b"\n", 0, start) + 1) + 1
        return None, ParseProblem(
            f"file is not valid {encoding}: byte {data[start:start + 1]!r} at line {line}, column {column}",
            line,
            column,
        )
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, None


# Line ends as Python's tokenizer (and libcst's positions) count them; str.splitlines() also
# splits at form feeds and other separators.
_LINE_END = re.compile(r"\r\n?|\n")


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


# --------------------------------------------------------------------------------------------
# suppression comments


def parse_suppressions(text: str) -> Tuple[Suppression, ...]:
    if "noqa" not in text.lower() and "rankcheck:" not in text:
        return ()
    found: List[Suppression] = []
    try:
        tokens = [
            (tok.start[0], tok.start[1], tok.string)
            for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        tokens = [(n, line.find("#"), line[line.find("#") :]) for n, line in enumerate(text.splitlines(), 1) if "#" in line]
    for line, col, comment in tokens:
        for match in _SUPPRESSION_RE.finditer(comment):
            if match.group("noqa"):
                raw = match.group("noqa_codes") or ""
                form = "noqa"
            else:
                raw = match.group("rc_codes") or ""
                form = "rankcheck"
            codes = tuple(c.upper() for c in re.split(r"[\s,]+", raw) if c)
            found.append(Suppression(line=line, codes=codes, form=form, column=col + match.start() + 1))
    return tuple(found)


# --------------------------------------------------------------------------------------------
# scopes: what a name means, from this module alone


class _Scope:
    """Names bound in one function (or the module): locals, local defs, aliases to globals."""

    def __init__(self, qualname: str, parent: Optional["_Scope"], is_module: bool = False) -> None:
        self.qualname = qualname
        self.parent = parent
        self.is_module = is_module
        self.locals: Set[str] = set()
        # name -> dotted global it stands for (imports, defs, classes, single simple aliases)
        self.aliases: Dict[str, str] = {}
        self.first_param: Optional[str] = None  # `self` / `cls` of a method
        self.class_qualname: Optional[str] = None

    def resolve(self, name: str) -> Tuple[str, str]:
        """('qual', dotted) for a name that stands for a global thing, ('local', name) for a local
        variable, ('global', name) for a module-level variable."""
        scope: Optional[_Scope] = self
        while scope is not None:
            if name in scope.aliases:
                return "qual", scope.aliases[name]
            if name in scope.locals:
                if scope is self:
                    return "local", name
                return ("global", name) if scope.is_module else ("local", name)
            scope = scope.parent
        return "qual", name  # builtins and unknown names: their bare name (`exit`, `int`)


def _dotted(node: cst.BaseExpression) -> Optional[List[str]]:
    parts: List[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return list(reversed(parts))
    return None


def _resolve_relative(module: str, is_package: bool, level: int, target: Optional[str]) -> str:
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    base = ".".join(parts)
    if target:
        return f"{base}.{target}" if base else target
    return base


def _import_bindings(node: cst.CSTNode, module: str, is_package: bool) -> List[Tuple[str, str]]:
    out: List[Tuple[str, str]] = []
    if isinstance(node, cst.Import):
        for alias in node.names:
            dotted = _dotted(alias.name)
            if not dotted:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                out.append((alias.asname.name.value, ".".join(dotted)))
            else:
                out.append((dotted[0], dotted[0]))
    elif isinstance(node, cst.ImportFrom):
        dotted = _dotted(node.module) if node.module is not None else None
        target = ".".join(dotted) if dotted else None
        level = len(node.relative)
        base = _resolve_relative(module, is_package, level, target) if level else (target or "")
        if isinstance(node.names, cst.ImportStar):
            return out
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            name = alias.name.value
            bound = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound = alias.asname.name.value
            out.append((bound, f"{base}.{name}" if base else name))
    return out


class _BindingCollector(cst.CSTVisitor):
    """Names a function (or module) body binds, without descending into nested scopes."""

    def __init__(self, module: str, is_package: bool) -> None:
        self.module = module
        self.is_package = is_package
        self.assigned: Dict[str, int] = {}
        self.simple_aliases: Dict[str, cst.BaseExpression] = {}
        self.defs: List[str] = []
        self.imports: List[Tuple[str, str]] = []
        self.depth = 0

    def _bind(self, target: cst.BaseExpression, value: Optional[cst.BaseExpression] = None) -> None:
        if isinstance(target, cst.Name):
            self.assigned[target.value] = self.assigned.get(target.value, 0) + 1
            if value is not None and isinstance(value, (cst.Name, cst.Attribute, cst.Lambda)):
                self.simple_aliases[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._bind(el.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.defs.append(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.defs.append(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._bind(t.target, node.value if len(node.targets) == 1 else None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)
        self._bind(node.target)  # an augmented name is never a simple alias

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind(node.name.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_Import(self, node: cst.Import) -> None:
        self.imports.extend(_import_bindings(node, self.module, self.is_package))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.imports.extend(_import_bindings(node, self.module, self.is_package))

    # Comprehension variables live in their own scope: do not bind them here.
    def visit_CompFor(self, node: cst.CompFor) -> None:
        pass

    def collect(self, body: Sequence[cst.CSTNode]) -> None:
        """The same bindings as visiting `body`, found by walking statements only: names are bound
        by statements, except by `:=`, and the caller visits fully when the module has one. libcst's
        generic visitor costs several times a parse; this walk touches a few nodes per statement."""
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        self.visit_Assign(small)
                    elif isinstance(small, cst.AnnAssign):
                        self.visit_AnnAssign(small)
                    elif isinstance(small, cst.AugAssign):
                        self.visit_AugAssign(small)
                    elif isinstance(small, (cst.Import, cst.ImportFrom)):
                        self.imports.extend(_import_bindings(small, self.module, self.is_package))
            elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                self.defs.append(stmt.name.value)
            elif isinstance(stmt, cst.If):
                self.collect(stmt.body.body)
                self._collect_else(stmt.orelse)
            elif isinstance(stmt, cst.For):
                self.visit_For(stmt)
                self.collect(stmt.body.body)
                self._collect_else(stmt.orelse)
            elif isinstance(stmt, cst.While):
                self.collect(stmt.body.body)
                self._collect_else(stmt.orelse)
            elif isinstance(stmt, cst.With):
                for item in stmt.items:
                    self.visit_WithItem(item)
                self.collect(stmt.body.body)
            elif isinstance(stmt, (cst.Try, cst.TryStar)):
                self.collect(stmt.body.body)
                for handler in stmt.handlers:
                    if handler.name is not None:
                        self._bind(handler.name.name)
                    self.collect(handler.body.body)
                self._collect_else(stmt.orelse)
                if stmt.finalbody is not None:
                    self.collect(stmt.finalbody.body.body)
            elif isinstance(stmt, cst.Match):
                for case in stmt.cases:
                    self.collect(case.body.body)
            elif not isinstance(stmt, cst.BaseSmallStatement):
                stmt.visit(self)  # a statement this walk does not know: the generic way

    def _collect_else(self, orelse: Optional[cst.CSTNode]) -> None:
        if isinstance(orelse, cst.If):
            self.collect([orelse])
        elif orelse is not None:
            self.collect(orelse.body.body)  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------------
# the builder: libcst statements -> IR tuples


class _FunctionBuilder:
    def __init__(self, owner: "_ModuleBuilder", scope: _Scope, qualname: str) -> None:
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
        condition = self.text(test)
        # The statement's head as written: `if x:`, `while x:`, but `assert x` (no block follows),
        # and an operand of `and`/`or` alone.
        if keyword is GuardKeyword.OPERAND:
            head = condition
        elif keyword is GuardKeyword.ASSERT:
            head = f"assert {condition}"
        else:
            head = f"{keyword.value} {condition}:"
        return GuardInfo(span=self.span(head_node), head=head, condition=condition, keyword=keyword)

    # -- expressions
    def expr(self, node: Optional[cst.BaseExpression]) -> Expr:
        if node is None:
            return ("const", None)
        # The parser builds nodes of exactly these classes: comparing the type is the same test as
        # isinstance(), without the slow path libcst's abstract base classes take on every miss.
        if type(node) is cst.Name:
            if node.value in ("True", "False", "None"):
                return ("const", {"True": True, "False": False, "None": None}[node.value])
            return ("name", node.value)
        if type(node) is cst.Integer:
            try:
                return ("const", int(node.value.replace("_", ""), 0))
            except ValueError:
                return ("const", None)
        if type(node) is cst.SimpleString:
            try:
                return ("const", node.evaluated_value)
            except Exception:  # noqa: BLE001 - odd prefixes: the literal is not interesting
                return ("const", None)
        if isinstance(node, (cst.Float, cst.Imaginary, cst.ConcatenatedString, cst.FormattedString)):
            parts = []
            if type(node) is cst.FormattedString:
                for p in node.parts:
                    if isinstance(p, cst.FormattedStringExpression):
                        parts.append(self.expr(p.expression))
            return ("op", tuple(parts)) if parts else ("const", None)
        if type(node) is cst.Attribute:
            return ("attr", self.expr(node.value), node.attr.value)
        if type(node) is cst.Call:
            return self.call(node)
        if type(node) is cst.Comparison:
            ops = tuple(self._cmp_op(t.operator) for t in node.comparisons)
            operands = (self.expr(node.left),) + tuple(self.expr(t.comparator) for t in node.comparisons)
            return ("cmp", ops, operands)
        if type(node) is cst.UnaryOperation:
            if isinstance(node.operator, cst.Not):
                return ("not", self.expr(node.expression))
            inner = self.expr(node.expression)
            if isinstance(node.operator, cst.Minus) and inner[0] == "const" and isinstance(inner[1], int):
                return ("const", -inner[1])
            return ("op", (inner,))
        if type(node) is cst.BooleanOperation:
            op = "and" if isinstance(node.operator, cst.And) else "or"
            operands: List[Expr] = []
            self._flatten_bool(node, op, operands)
            return ("bool", op, tuple(operands), self.guard(node, node, GuardKeyword.OPERAND))
        if type(node) is cst.IfExp:
            return ("ifexp", self.expr(node.test), self.expr(node.body), self.expr(node.orelse), self.guard(node, node.test, GuardKeyword.IF))
        if type(node) is cst.Subscript:
            env_var = self._environ_subscript(node)
            if env_var is not None:
                return ("environ", env_var)
            index = [self.expr(e.slice.value) for e in node.slice if isinstance(e.slice, cst.Index)]
            slices = []
            for e in node.slice:
                if isinstance(e.slice, cst.Slice):
                    parts = tuple(self.expr(x) if x is not None else None for x in (e.slice.lower, e.slice.upper, e.slice.step))
                    slices.append(parts)
                    index.extend(x for x in parts if x is not None)
            return ("subscript", self.expr(node.value), tuple(index), bool(slices), tuple(slices))
        if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
            values = tuple(self.expr(el.value) for el in node.elements)
            if all(v[0] == "const" for v in values):
                return ("const", tuple(v[1] for v in values))
            return ("op", values)
        if type(node) is cst.Dict:
            vals: List[Expr] = []
            for el in node.elements:
                if isinstance(el, cst.DictElement):
                    vals.extend((self.expr(el.key), self.expr(el.value)))
                else:
                    vals.append(self.expr(el.value))
            return ("op", tuple(vals))
        if type(node) is cst.BinaryOperation:
            return ("op", (self.expr(node.left), self.expr(node.right)))
        if type(node) is cst.NamedExpr:
            return ("walrus", node.target.value if isinstance(node.target, cst.Name) else "", self.expr(node.value))
        if type(node) is cst.Await:
            return self.expr(node.expression)
        if type(node) is cst.Yield:
            # The point where a @contextmanager hands control to the `with` body.
            self.is_generator = True
            value = node.value
            if isinstance(value, cst.From):
                return ("yield", self.expr(value.item))
            return ("yield", self.expr(value) if value is not None else ("const", None))
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            return self._comprehension(node)
        if type(node) is cst.Lambda:
            return ("op", ())
        if type(node) is cst.StarredElement:
            return self.expr(node.value)
        return ("op", ())

    def _comprehension(self, node: cst.BaseExpression) -> Expr:
        """("comp", ((target, iterable, conditions), ...), elements): a filter decides how many."""
        generators = []
        comp = node.for_in  # type: ignore[attr-defined]
        while comp is not None:
            iterable = self.expr(comp.iter)
            target = self.target(comp.target)
            conditions = tuple(self.expr(cond.test) for cond in comp.ifs)
            generators.append((target, iterable, conditions))
            comp = comp.inner_for_in
        if isinstance(node, cst.DictComp):
            elements: Tuple[Expr, ...] = (self.expr(node.key), self.expr(node.value))
        else:
            elements = (self.expr(node.elt),)  # type: ignore[attr-defined]
        return ("comp", tuple(generators), elements)

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
        dotted = _dotted(node)
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
                except Exception:  # noqa: BLE001
                    return None
        return None

    def callee_ref(self, func: cst.BaseExpression) -> Ref:
        if isinstance(func, cst.Name):
            kind, value = self.scope.resolve(func.value)
            if kind == "qual":
                return ("qual", value)
            return ("local", value) if kind == "local" else ("global", value)
        if isinstance(func, cst.Attribute):
            base = func.value
            if isinstance(base, cst.Name) and base.value == self.scope_first_param():
                return ("self", func.attr.value)
            if isinstance(base, cst.Call) and isinstance(base.func, cst.Name) and base.func.value == "super":
                return ("super", func.attr.value)
            qual = self._qualify(func)
            if qual is not None:
                return ("qual", qual)
            return ("attr", self.expr(base), func.attr.value)
        return ("dyn",)

    def scope_first_param(self) -> Optional[str]:
        scope: Optional[_Scope] = self.scope
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
                except Exception:  # noqa: BLE001
                    var = None
                if var is not None:
                    for extra in node.args[1:]:
                        self.expr(extra.value)
                    return ("environ", var)
        # Arguments are evaluated before the call: their calls come first in program order.
        if isinstance(func, cst.Attribute) and callee[0] == "attr":
            pass  # the base expression was already converted by callee_ref
        elif not isinstance(func, (cst.Name, cst.Attribute)):
            self.expr(func)
        args: List[Expr] = []
        arg_texts: List[str] = []
        kwargs: List[Tuple[str, Expr]] = []
        kwarg_texts: List[Tuple[str, str]] = []
        has_star = False
        for arg in node.args:
            value = self.expr(arg.value)
            if arg.star:
                has_star = True
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
                text=self.text(func),
                args=tuple(args),
                kwargs=tuple(kwargs),
                arg_texts=tuple(arg_texts),
                kwarg_texts=tuple(kwarg_texts),
                has_star=has_star,
            )
        )
        return ("call", index)

    # -- assignment targets
    def target(self, node: cst.BaseExpression) -> Tuple:
        if isinstance(node, cst.Name):
            return ("name", node.value)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == self.scope_first_param():
            return ("selfattr", node.attr.value)
        if isinstance(node, (cst.Tuple, cst.List)):
            return ("unpack", tuple(self.target(el.value) for el in node.elements))
        if isinstance(node, cst.StarredElement):
            return self.target(node.value)
        return ("other", self.expr(node))

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
            out.append(("expr", self.expr(node.value), self.span(node)))
        elif type(node) is cst.Assign and isinstance(node.value, cst.Lambda) and self._lambda_alias(node):
            name = node.targets[0].target.value  # type: ignore[union-attr]
            self.owner.lambda_function(name, node.value, self.scope, self.qualname_prefix())
        elif type(node) is cst.Assign:
            value = self.expr(node.value)
            out.append(("assign", tuple(self.target(t.target) for t in node.targets), value, self.span(node)))
        elif type(node) is cst.AnnAssign:
            if node.value is not None:
                out.append(("assign", (self.target(node.target),), self.expr(node.value), self.span(node)))
        elif type(node) is cst.AugAssign:
            value = self.expr(node.value)
            out.append(("augassign", self.target(node.target), value, self.span(node)))
        elif type(node) is cst.Return:
            out.append(("exit", "return", self.expr(node.value) if node.value else None, self.span(node), "return"))
        elif type(node) is cst.Continue:
            out.append(("exit", "continue", None, self.span(node), "continue"))
        elif type(node) is cst.Break:
            out.append(("exit", "break", None, self.span(node), "break"))
        elif type(node) is cst.Raise:
            value = self.expr(node.exc) if node.exc is not None else None
            out.append(("exit", "raise", value, self.span(node), self.text(node)))
        elif type(node) is cst.Assert:
            test = self.expr(node.test)
            info = self.guard(node, node.test, GuardKeyword.ASSERT)
            failure = ("exit", "raise", None, self.span(node), info.head)
            out.append(("if", ("not", test), (failure,), (), info))
        elif type(node) is cst.If:
            out.append(self._if(node, GuardKeyword.IF))
        elif type(node) is cst.While:
            test = self.expr(node.test)
            info = self.guard(node, node.test, GuardKeyword.WHILE)
            out.append(("while", test, self.block(node.body), self.block(node.orelse.body) if node.orelse else (), info))
        elif type(node) is cst.For:
            iterable = self.expr(node.iter)
            info = GuardInfo(self.span(node), f"for {self.text(node.target)} in {self.text(node.iter)}:", self.text(node.iter), GuardKeyword.FOR)
            out.append(("for", self.target(node.target), iterable, self.block(node.body), self.block(node.orelse.body) if node.orelse else (), info))
        elif type(node) is cst.With:
            items = []
            for item in node.items:
                value = self.expr(item.item)
                items.append((value, self.target(item.asname.name) if item.asname is not None else None))
            out.append(("with", tuple(items), self.block(node.body), self.span(node)))
        elif isinstance(node, (cst.Try, getattr(cst, "TryStar", cst.Try))):
            handlers = []
            for h in node.handlers:
                type_text = self.text(h.type) if h.type is not None else ""
                name = h.name.name.value if h.name is not None and isinstance(h.name.name, cst.Name) else None
                handlers.append((type_text, name, self.block(h.body), self.span(h)))
            orelse = self.block(node.orelse.body) if node.orelse else ()
            final = self.block(node.finalbody.body) if node.finalbody else ()
            out.append(("try", self.block(node.body), tuple(handlers), orelse, final, self.span(node)))
        elif type(node) is cst.Match:
            out.append(self._match(node))
        elif type(node) is cst.FunctionDef:
            qual = self.owner.function(node, self.scope, self.qualname_prefix())
            out.append(("def", node.name.value, qual))
        elif type(node) is cst.ClassDef:
            self.owner.klass(node, self.scope, self.qualname_prefix())
        elif type(node) is cst.Global:
            out.append(("global", tuple(n.name.value for n in node.names)))
        elif isinstance(node, (cst.Del, cst.Pass, cst.Nonlocal, cst.Import, cst.ImportFrom)):
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
        return ("if", test, body, orelse, info)

    def _match(self, node: cst.Match) -> Stmt:
        subject = self.expr(node.subject)
        cases = []
        for case in node.cases:
            pattern = self._pattern(case.pattern)
            guard = self.expr(case.guard) if case.guard is not None else None
            text = self.text(case.pattern)
            info = GuardInfo(self.span(case), f"match {self.text(node.subject)}: case {text}:", f"{self.text(node.subject)} matches {text}", GuardKeyword.MATCH)
            cases.append((pattern, guard, self.block(case.body), info))
        return ("match", subject, tuple(cases))

    def _pattern(self, pattern: cst.MatchPattern) -> Tuple:
        if isinstance(pattern, cst.MatchValue):
            return ("value", self.expr(pattern.value))
        if isinstance(pattern, cst.MatchSingleton):
            return ("value", self.expr(pattern.value))
        if isinstance(pattern, cst.MatchAs):
            if pattern.pattern is None:
                return ("wild",)
            return self._pattern(pattern.pattern)
        if isinstance(pattern, cst.MatchOr):
            return ("or", tuple(self._pattern(p.pattern) for p in pattern.patterns))
        return ("other",)


class _ModuleBuilder:
    def __init__(self, module: str, is_package: bool, cst_module: cst.Module, ranges: Dict[int, Range], text: Optional[str] = None) -> None:
        self.module_name = module
        self.is_package = is_package
        self.positions = ranges
        self.cst_module = cst_module
        # `:=` binds inside expressions, which the statement walk of _BindingCollector skips
        self.has_walrus = text is None or ":=" in text
        self.text = text
        self.line_starts: Optional[List[int]] = None
        self.functions: List[FunctionSummary] = []
        self.classes: List[ClassSummary] = []

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

    def _scope_for(self, body: Sequence[cst.CSTNode], qualname: str, parent: Optional[_Scope], is_module: bool) -> _Scope:
        scope = _Scope(qualname, parent, is_module=is_module)
        collector = _BindingCollector(self.module_name, self.is_package)
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
            dotted = _dotted(value)
            if not dotted or dotted[0] in ("None", "True", "False"):
                continue
            kind, resolved = scope.resolve(dotted[0]) if dotted[0] != name else ("local", name)
            if kind == "qual":
                scope.aliases[name] = ".".join([resolved] + dotted[1:])
                scope.locals.discard(name)
        return scope

    def module(self) -> Tuple[_Scope, FunctionSummary]:
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

    def _decorator_names(self, node: cst.FunctionDef, scope: _Scope) -> Tuple[str, ...]:
        names = []
        for dec in node.decorators:
            expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
            dotted = _dotted(expr)
            if dotted:
                kind, value = scope.resolve(dotted[0])
                names.append(".".join([value] + dotted[1:]) if kind == "qual" else ".".join(dotted))
            else:
                names.append(_shorten(self.code_for(expr)))
        return tuple(names)

    def function(self, node: cst.FunctionDef, parent: _Scope, prefix: str, class_qualname: Optional[str] = None) -> str:
        qual = f"{prefix}.{node.name.value}"
        body_nodes = node.body.body if isinstance(node.body, cst.IndentedBlock) else node.body.body
        scope = self._scope_for(body_nodes, qual, parent, is_module=False)
        params = self._params(node.params)
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
                decorators=decorators,
                is_generator=builder.is_generator,
                is_staticmethod=is_static,
            )
        )
        return qual

    def lambda_function(self, name: str, node: cst.Lambda, parent: _Scope, prefix: str) -> str:
        qual = f"{prefix}.{name}"
        scope = _Scope(qual, parent)
        params = self._params(node.params)
        scope.locals.update(params)
        builder = _FunctionBuilder(self, scope, qual)
        value = builder.expr(node.body)
        body = (("exit", "return", value, self.span(node.body), "return"),)
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

    def klass(self, node: cst.ClassDef, parent: _Scope, prefix: str) -> str:
        qual = f"{prefix}.{node.name.value}"
        bases = []
        for arg in node.bases:
            dotted = _dotted(arg.value)
            if dotted:
                kind, value = parent.resolve(dotted[0])
                bases.append(".".join([value] + dotted[1:]) if kind == "qual" else ".".join(dotted))
        class_scope = _Scope(qual, parent)
        methods: List[Tuple[str, str]] = []
        body_nodes = node.body.body if isinstance(node.body, cst.IndentedBlock) else node.body.body
        start = len(self.functions)
        for stmt in body_nodes:
            if isinstance(stmt, cst.FunctionDef):
                # methods resolve names in the enclosing (module) scope, not the class body
                methods.append((stmt.name.value, self.function(stmt, parent, qual, class_qualname=qual)))
            elif isinstance(stmt, cst.ClassDef):
                self.klass(stmt, class_scope, qual)
        stores: Dict[str, List[str]] = {}
        for fn in self.functions[start:]:
            if fn.class_qualname != qual:
                continue
            for attr in _self_stores(fn.body):
                stores.setdefault(attr, []).append(fn.qualname)
        self.classes.append(
            ClassSummary(
                qualname=qual,
                name=node.name.value,
                module=self.module_name,
                bases=tuple(bases),
                methods=tuple(methods),
                self_stores=tuple((k, tuple(v)) for k, v in sorted(stores.items())),
                span=self.span(node.name),
            )
        )
        return qual


def _self_stores(body: Body) -> Set[str]:
    found: Set[str] = set()

    def targets(t: Tuple) -> None:
        if t[0] == "selfattr":
            found.add(t[1])
        elif t[0] == "unpack":
            for sub in t[1]:
                targets(sub)

    def walk(stmts: Body) -> None:
        for s in stmts:
            kind = s[0]
            if kind == "assign":
                for t in s[1]:
                    targets(t)
            elif kind == "augassign":
                targets(s[1])
            elif kind in ("if", "while"):
                walk(s[2])
                walk(s[3])
            elif kind == "for":
                walk(s[3])
                walk(s[4])
            elif kind == "with":
                walk(s[2])
            elif kind == "try":
                walk(s[1])
                for h in s[2]:
                    walk(h[2])
                walk(s[3])
                walk(s[4])
            elif kind == "match":
                for case in s[2]:
                    walk(case[2])

    walk(body)
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


def summarize_source(text: str, path: str, module: str, is_package: bool = False, parses: Optional["RecentParses"] = None) -> ModuleSummary:
    """The pure per-module step: source text -> ModuleSummary (never raises on bad input).
    `parses` (the language server's) keeps the last tree of each path, so that an edited buffer
    is parsed again only where it changed (reparse.py); the summary is the same."""
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
        builder = _ModuleBuilder(module, is_package, parsed, ranges, text)
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
    )
