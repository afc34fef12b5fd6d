"""The summary IR: what one module says, as small picklable values (no libcst objects).

`frontend.lower` turns source text into a `ModuleSummary`; everything after it (link, interp,
checks) reads only these. The IR keeps just what the analysis needs: definitions, imports, call
sites with their callee resolved as far as the module alone allows, and each function body as a
tree of statements whose expressions are reduced to what can carry rank dependence.

Statements, expressions, assignment targets, callee references and match patterns are tuples
tagged by their first element: summaries are cached and unpickled on every run, and named types
cost there (measured on Megatron-LM's 1,344 summaries: 0.88 s to unpickle as tuples, 1.95 s as
NamedTuples, 1.59 s as slotted dataclasses). Each shape is declared once below (`Shape`): the
lowering builds nodes with its `make`, readers unpack them in its field order, and
tests/test_ir_shapes.py checks every node the lowering of the corpus builds against its shape.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple, Union

# The function that stands for a module's top-level code: "pkg.mod.<module>".
MODULE_FUNCTION = "<module>"

Expr = Tuple[Any, ...]
Stmt = Tuple[Any, ...]
Body = Tuple[Stmt, ...]
# A constant a call passes or a parameter defaults to that decides branches: a flag (True, False,
# None) or a negative rank (-1: "no process group").
FlagValue = Union[None, bool, int]
Ref = Tuple[Any, ...]


def is_no_group_rank(value: object) -> bool:
    """A negative integer as a rank: the "not distributed" value launchers and helpers use
    (`torch_distributed_zero_first(-1)`, `create_dataloader(..., rank=-1)`)."""
    return isinstance(value, int) and not isinstance(value, bool) and value < 0


class Shape:
    """One tuple shape of the IR: `(tag, *fields)`."""

    __slots__ = ("kind", "tag", "fields", "doc")

    def __init__(self, kind: str, tag: str, fields: Tuple[str, ...], doc: str) -> None:
        self.kind = kind  # "expr", "stmt", "target", "ref" or "pattern"
        self.tag = tag
        self.fields = fields
        self.doc = doc

    def make(self, *values: Any) -> Tuple[Any, ...]:
        """The node (its arity is checked by tests/test_ir_shapes.py, not on this hot path)."""
        return (self.tag, *values)

    def get(self, node: Tuple[Any, ...], field: str) -> Any:
        return node[1 + self.fields.index(field)]

    def __repr__(self) -> str:
        return f"({self.tag!r}, {', '.join(self.fields)})"


SHAPES: Dict[Tuple[str, str], Shape] = {}


def _shape(kind: str, tag: str, *fields: str, doc: str) -> Shape:
    shape = Shape(kind, tag, fields, doc)
    SHAPES[kind, tag] = shape
    return shape


# Expressions.
CONST = _shape("expr", "const", "value", doc="a small literal: int, str, bool, None, or a tuple of those")
NAME = _shape("expr", "name", "id", doc="a read of a name (local, global or imported)")
ATTR = _shape("expr", "attr", "base", "attr", doc="an attribute read")
CALL = _shape("expr", "call", "index", doc="the value of call site `index` of the enclosing function")
CMP = _shape("expr", "cmp", "ops", "operands", doc='a comparison chain; ops like "==", "in", "is not"')
NOT = _shape("expr", "not", "operand", doc="`not operand`")
BOOL = _shape("expr", "bool", "op", "operands", "info",
              doc='`a and b` / `a or b` ("and"|"or"): calls in later operands run only on some paths; info: GuardInfo')
IFEXP = _shape("expr", "ifexp", "test", "body", "orelse", "info", doc="`body if test else orelse`; info: GuardInfo")
ENVIRON = _shape("expr", "environ", "var", doc='os.environ["VAR"] / os.environ.get("VAR") / os.getenv("VAR")')
SUBSCRIPT = _shape("expr", "subscript", "base", "index", "has_slice", "slices",
                   doc="`base[...]`; index: every index expression (slice bounds included); slices: (lower, upper, step, width) per slice, width: the part of upper that is the length (`a:a + n` gives n) or None")
SLICE = _shape("expr", "slice", "lower", "upper", "step", "width",
               doc="`slice(lower, upper, step)`: a slice object; width as for a subscript's slices")
COMP = _shape("expr", "comp", "generators", "elements",
              doc="a comprehension; generators: ((target, iterable, conditions), ...); elements: the element (or key and value)")
WALRUS = _shape("expr", "walrus", "name", "value", doc="`name := value`")
YIELD = _shape("expr", "yield", "value", doc="`yield value` (a generator context manager hands over to its `with` body)")
TUPLE = _shape("expr", "tuple", "items", doc="a tuple or list display, item by item (`(world_size, rank)`); all constants: a CONST")
DICT = _shape("expr", "dict", "entries",
              doc="a dict display: ((key, value), ...) in order; a `**mapping` spread is (None, mapping)")
OP = _shape("expr", "op", "operands", doc="any other expression: it depends on its parts")
PRODUCT = _shape("expr", "product", "operands", doc="`a * b`: depends on its parts as an OP does, and is a multiple of each factor")
TRIMMED = _shape("expr", "trimmed", "operands", doc="`n - n % k` (operands n, n, k): depends on its parts as an OP does, and is a multiple of k")
PADDED = _shape("expr", "padded", "operands",
                doc="`items + [fill] * (n - len(items))` (operands items, fill, n): as many items as n says, whatever items held")
SPREAD = _shape("expr", "spread", "operands", "fixed",
                doc="a tuple or list display with a `*spread` (`(n, *rest)`): its parts in order, depended on as an OP's; "
                    "fixed: how many items precede the first spread (where they stand is known, how many follow is not)")
CEIL = _shape("expr", "ceil", "value",
              doc="a ceiling division (`(n + k - 1) // k`, `math.ceil(n / k)`): shares of that size overrun the last rank's")

# Statements.
EXPR = _shape("stmt", "expr", "value", "span", doc="an expression statement")
ASSIGN = _shape("stmt", "assign", "targets", "value", "span", doc="`t1 = t2 = value` (and an annotated assignment with a value)")
AUGASSIGN = _shape("stmt", "augassign", "target", "value", "span", "op", doc="`target op= value`; op: \"+\", \"-\", ... (\"?\" for the rest)")
IF = _shape("stmt", "if", "test", "body", "orelse", "info",
            doc="`if`, an `elif` as the only statement of `orelse`; an `assert` as `if not test: raise`")
WHILE = _shape("stmt", "while", "test", "body", "orelse", "info", doc="`while test:`")
FOR = _shape("stmt", "for", "target", "iterable", "body", "orelse", "info", doc="`for target in iterable:`")
EXIT = _shape("stmt", "exit", "kind", "value", "span", "text", doc='return / continue / break / raise (kind); value: the returned or raised expression')
WITH = _shape("stmt", "with", "items", "body", "span", doc="`with`; items: ((context expression, target or None), ...)")
TRY = _shape("stmt", "try", "body", "handlers", "orelse", "final",
             doc="`try`; handlers: ((type text, bound name or None, body, span, type expression or None), ...)")
MATCH = _shape("stmt", "match", "subject", "cases", doc="`match`; cases: ((pattern, guard expr or None, body, GuardInfo), ...)")
DEF = _shape("stmt", "def", "name", "qualname", doc="a nested `def`: the name is bound to that function")
GLOBAL = _shape("stmt", "global", "names", doc="`global a, b`")

# Assignment targets.
NAME_TARGET = _shape("target", "name", "id", doc="a name")
SELFATTR = _shape("target", "selfattr", "attr", doc="an attribute of the method's receiver (`self.attr`)")
UNPACK = _shape("target", "unpack", "targets", doc="a tuple or list of targets")
OTHER_TARGET = _shape("target", "other", "expr", doc="anything else (`d[k]`, `obj.attr`): evaluated, container updated")

# How a call names its callee, resolved as far as one module allows.
QUAL = _shape("ref", "qual", "dotted", doc="a dotted global name (through imports/definitions): `torch.distributed.all_reduce`")
# The method name ClassSummary.self_mutations gives an item store (`self.counts[key] = n`): the
# container changes as `__setitem__` changes it.
ITEM_STORE = "__setitem__"
SELF_METHOD = _shape("ref", "self", "method", doc="self.method() / cls.method() inside a class")
SUPER_METHOD = _shape("ref", "super", "method", doc="super().method()")
ATTR_METHOD = _shape("ref", "attr", "base", "method", doc="obj.method(): resolved later from what obj holds")
LOCAL_CALL = _shape("ref", "local", "name", doc="a local variable called as a function")
GLOBAL_CALL = _shape("ref", "global", "name", doc="a module-level variable called as a function")
CALLED_VALUE = _shape("ref", "value", "expr", doc="any other expression called: `unwrap(model)(x)`, `hooks[i](x)`")

# Match patterns.
WILD = _shape("pattern", "wild", doc="`case _:` or a capture: matches anything")
VALUE = _shape("pattern", "value", "expr", doc="a literal or a dotted value")
OR_PATTERN = _shape("pattern", "or", "patterns", doc="`case a | b:`")
OTHER_PATTERN = _shape("pattern", "other", doc="any other pattern (class, sequence, mapping)")


@dataclass(frozen=True)
class Span:
    line: int
    column: int  # 1-based
    end_line: int
    end_column: int


@dataclass(frozen=True)
class CallSite:
    index: int
    span: Span
    callee: Ref
    text: str  # source of the callee expression, e.g. "dist.all_reduce"
    args: Tuple[Expr, ...]
    kwargs: Tuple[Tuple[str, Expr], ...]
    arg_texts: Tuple[str, ...]  # source of each positional argument (shortened)
    kwarg_texts: Tuple[Tuple[str, str], ...]
    has_star: bool = False
    # The `*args` and `**kwargs` spread into the call (`model(**batch)`), in order: which
    # parameters they fill is not known (Calls._eval_args lets a spread batch reach the call).
    spreads: Tuple[Expr, ...] = ()


class GuardKeyword(enum.Enum):
    """The statement or expression a condition belongs to."""

    IF = "if"  # `if`, and a conditional expression's test
    ELIF = "elif"
    WHILE = "while"
    FOR = "for"  # the iterable of a `for` (how many rounds it runs)
    ASSERT = "assert"  # `assert cond`, modelled as `if not cond: raise`
    MATCH = "match"  # a `case` of a `match`
    OPERAND = "operand"  # the operands before an `and`/`or` operand decide whether it runs
    CALL = "call"  # a framework call that loops inside (`generate` decodes until its sequences end)
    ITEMS = "items"  # a framework call that issues its collective once per item of an argument
    DRIVEN = "driven"  # a framework call that runs a hook of the model once per batch of a loader
    EXCEPT = "except"  # an `except` catching what a called function raised on some ranks only
    WITH = "with"  # a context manager that lets some ranks into its body first (sequences.staggered)


@dataclass(frozen=True)
class GuardInfo:
    """Where a condition sits and how it reads, for evidence."""

    span: Span
    head: str  # "if rank == 0:"
    condition: str  # "rank == 0" (up to a few hundred characters; `shown` cuts it for evidence)
    keyword: GuardKeyword = GuardKeyword.IF

    def shown(self, needles: Iterable[str] = ()) -> Tuple[str, str]:
        """(head, condition) as evidence quotes them: cut to one short line, around the first of
        `needles` (what the rank comes from) the condition contains."""
        condition = cut_around(self.condition, needles)
        return (guard_head(self.keyword, condition), condition) if condition != self.condition else (self.head, condition)


@dataclass(frozen=True)
class FunctionSummary:
    qualname: str  # "pkg.mod.Class.method", "pkg.mod.<module>" for module-level code
    name: str
    module: str
    class_qualname: Optional[str]
    params: Tuple[str, ...]
    span: Span
    body: Body
    calls: Tuple[CallSite, ...]
    decorators: Tuple[str, ...] = ()  # resolved dotted names where possible, else source text
    is_generator: bool = False
    is_staticmethod: bool = False
    # (parameter, default) for defaults written True, False or None, or a negative integer (the
    # "no process group" rank, `rank=-1`): what a call leaves there.
    flag_defaults: Tuple[Tuple[str, FlagValue], ...] = ()
    # (parameter, dotted name) for parameters annotated with a class (`accelerator: Accelerator`,
    # `trainer: "pl.Trainer"`, `Optional[DDP]`): what the parameter holds when no caller says.
    param_types: Tuple[Tuple[str, str], ...] = ()
    # (parameter, dotted name) for defaults written as a name (`test_type=is_torch_tensor`),
    # resolved where the `def` stands: what a call that leaves the parameter out passes.
    named_defaults: Tuple[Tuple[str, str], ...] = ()
    # (parameter, expression) for defaults written as any other expression (`rank=int(os.environ[
    # "RANK"])`, a dataclass field's `global_rank: int = int(get_env("RANK", "-1"))`), lowered in
    # this function's own calls: what a call that leaves the parameter out holds in it.
    value_defaults: Tuple[Tuple[str, Expr], ...] = ()
    # The parameters a call must pass (no default, not `*args`/`**kwargs`).
    required: Tuple[str, ...] = ()
    # The `**kwargs` parameter's name: what a call passes by keywords no other parameter takes.
    star_kwargs: Optional[str] = None

    def caller_params(self) -> Tuple[str, ...]:
        """The parameters a call binds: all but a method's receiver (`self`, `cls`)."""
        return self.params[1:] if self.class_qualname and not self.is_staticmethod else self.params

    @property
    def is_classmethod(self) -> bool:
        return any(d.rsplit(".", 1)[-1] == "classmethod" for d in self.decorators)


@dataclass(frozen=True)
class ClassSummary:
    qualname: str
    name: str
    module: str
    bases: Tuple[str, ...]  # resolved dotted names where possible
    methods: Tuple[Tuple[str, str], ...]  # (method name, function qualname)
    # attribute name -> qualnames of methods that store `self.<attr> = ...`
    self_stores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    span: Optional[Span] = None
    # attribute name -> (method name, qualname of the method that calls it on `self.<attr>`):
    # `self.outputs.append(x)` may change what other methods read (Catalog containers decide).
    self_mutations: Tuple[Tuple[str, Tuple[Tuple[str, str], ...]], ...] = ()


@dataclass(frozen=True)
class Suppression:
    line: int
    codes: Tuple[str, ...]  # empty: every code
    form: str  # "noqa" or "rankcheck"
    column: int = 1


@dataclass(frozen=True)
class ParseProblem:
    message: str
    line: int
    column: int


# The bound name of a star import (`from m import *`) in ModuleSummary.imports: not an identifier,
# so nothing else binds it.
STAR_IMPORT = "*"


@dataclass(frozen=True)
class ModuleSummary:
    path: str
    module: str  # dotted module name, "pkg.sub.mod"
    is_package: bool  # an __init__.py
    imports: Tuple[Tuple[str, str], ...] = ()  # module-level alias -> dotted target
    functions: Tuple[FunctionSummary, ...] = ()
    classes: Tuple[ClassSummary, ...] = ()
    # module-level names bound by assignment (their values come from interpreting <module>)
    global_names: Tuple[str, ...] = ()
    suppressions: Tuple[Suppression, ...] = ()
    problem: Optional[ParseProblem] = None
    # (first name, line) of each absolute import statement, as written: where an import of a
    # name other source roots share finds nothing (driver.identity, RC004); minimal summaries too
    absolute_imports: Tuple[Tuple[str, int], ...] = ()

    def function_map(self) -> Dict[str, FunctionSummary]:
        return {f.qualname: f for f in self.functions}


def nested_bodies(stmt: Stmt) -> Tuple[Body, ...]:
    """The statement lists a statement holds, in program order (none for a simple statement)."""
    tag = stmt[0]
    if tag in ("if", "while"):
        return (stmt[2], stmt[3])
    if tag == "for":
        return (stmt[3], stmt[4])
    if tag == "with":
        return (stmt[2],)
    if tag == "try":
        return (stmt[1], *(handler[2] for handler in stmt[2]), stmt[3], stmt[4])
    if tag == "match":
        return tuple(case[2] for case in stmt[2])
    return ()


def nested_self_attribute(expr: Expr, receiver: str) -> Optional[str]:
    """`self.state.model` (the receiver named `receiver`): "state.model", an attribute of an
    object the receiver holds, which a class keeps as object state as it keeps `self.model`.
    None for anything else (one level only)."""
    if expr[0] == "attr" and expr[1][0] == "attr" and expr[1][1] == ("name", receiver):
        return f"{expr[1][2]}.{expr[2]}"
    return None


def statements(body: Body) -> Iterator[Stmt]:
    """Every statement of a body, nested ones included, in program order (a nested `def` is
    its own function: its body is not here)."""
    stack = [iter(body)]
    while stack:
        stmt = next(stack[-1], None)
        if stmt is None:
            stack.pop()
            continue
        yield stmt
        bodies = nested_bodies(stmt)
        if bodies:
            stack.extend(iter(b) for b in reversed(bodies))


def bound_names(target: object) -> List[str]:
    """The names an assignment or loop target binds (`x`, `a, (b, c)`); none for an attribute or
    an item (`self.x`, `d[k]`)."""
    if not isinstance(target, tuple) or not target:
        return []
    if target[0] == "name":
        return [target[1]]
    if target[0] == "unpack":
        return [name for sub in target[1] for name in bound_names(sub)]
    return []


def free_names(fn: FunctionSummary) -> FrozenSet[str]:
    """The names a function reads that it does not bind itself (parameters, assignments, loop
    targets, nested `def`s): in a nested function, its enclosing function's variables."""
    bound: Set[str] = set(fn.params)
    for stmt in statements(fn.body):
        if stmt[0] == "assign":
            for target in stmt[1]:
                bound.update(bound_names(target))
        elif stmt[0] == "for":
            bound.update(bound_names(stmt[1]))
        elif stmt[0] == "def":
            bound.add(stmt[1])
    read: Set[str] = set()
    for node in walk_tuples((fn.body, tuple((site.args, site.kwargs, site.callee) for site in fn.calls))):
        if node[0] in ("name", "local") and len(node) == 2 and isinstance(node[1], str):
            read.add(node[1])
    return frozenset(read - bound)


def render_expr(expr: Expr) -> str:
    """Short source-like text of an IR expression, for evidence and for naming values."""
    tag = expr[0]
    if tag == "name":
        return expr[1]
    if tag == "attr":
        return f"{render_expr(expr[1])}.{expr[2]}"
    if tag == "const":
        return repr(expr[1])
    if tag == "environ":
        return f'os.environ["{expr[1]}"]'
    if tag == "subscript":
        return f"{render_expr(expr[1])}[...]"
    return "..."


SHOWN_LIMIT = 80


def cut_around(text: str, needles: Iterable[str], limit: int = SHOWN_LIMIT) -> str:
    """`text` in at most about `limit` characters, keeping the first of `needles` it contains in
    view (a long condition's rank test is often at its end); cut at the end when none is there."""
    if len(text) <= limit:
        return text
    for needle in needles:
        at = text.find(needle) if needle else -1
        if at < 0 or len(needle) > limit - 6:
            continue
        end = at + len(needle)
        start = max(0, min(at - (limit - len(needle)) // 2, len(text) - (limit - 6)))
        stop = min(len(text), max(end, start + limit - 6))
        return ("..." if start > 0 else "") + text[start:stop] + ("..." if stop < len(text) else "")
    return text[: limit - 3] + "..."


def guard_head(keyword: GuardKeyword, condition: str) -> str:
    """The statement's head as written: `if x:`, `while x:`, but `assert x` (no block follows),
    and an operand of `and`/`or` alone."""
    if keyword is GuardKeyword.OPERAND:
        return condition
    if keyword is GuardKeyword.ASSERT:
        return f"assert {condition}"
    return f"{keyword.value} {condition}:"


def names_bound(body: Body, assignments: bool = True) -> FrozenSet[str]:
    """The names the statements bind anywhere (assignments, loop targets, `with ... as`,
    `except ... as`, nested `def`s, walruses), nested statements included; with `assignments`
    False, every way but plain assignment."""
    found: Set[str] = set()
    for stmt in statements(body):
        tag = stmt[0]
        if tag == "assign":
            if assignments:
                found.update(name for target in stmt[1] for name in bound_names(target))
        elif tag == "for":
            found.update(bound_names(stmt[1]))
        elif tag == "def":
            found.add(stmt[1])
        elif tag == "with":
            found.update(name for _, target in stmt[1] if target is not None for name in bound_names(target))
        elif tag == "try":
            found.update(handler[1] for handler in stmt[2] if handler[1])
    found.update(node[1] for node in walk_tuples(body) if node[0] == "walrus" and isinstance(node[1], str))
    return frozenset(found)


def bound_before(fn: FunctionSummary, name: str, span: Optional[Span]) -> bool:
    """Whether `name` may be bound again before the statement at `span` runs: by a statement
    before it, where it is one of the function's top-level `if`s; anywhere in the function else."""
    preceding: List[Stmt] = []
    for stmt in fn.body:
        if span is not None and stmt[0] == "if" and stmt[4].span == span:
            return name in names_bound(tuple(preceding))
        preceding.append(stmt)
    return name in names_bound(fn.body)


def walk_tuples(value: object) -> Iterator[tuple]:
    """Every IR node (a tuple whose first item is its tag) nested anywhere in `value`, in no
    particular order: for the cheap scans that look for names or tags without interpreting."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            if item and isinstance(item[0], str):
                yield item
            stack.extend(x for x in item if isinstance(x, tuple))

