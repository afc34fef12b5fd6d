"""The summary IR: what one module says, as small picklable values (no libcst objects).

`summarize` turns source text into a `ModuleSummary`; everything after it (link, interp, checks)
reads only these. The IR keeps just what the analysis needs: definitions, imports, call sites with
their callee resolved as far as the module alone allows, and each function body as a tree of
statements whose expressions are reduced to what can carry rank dependence.

Expressions are tuples tagged by their first element (compact to pickle and cache):
    ("const", value)                   small literal (int/str/bool/None or tuple of those)
    ("name", id)                       read of a name (local, global or imported)
    ("attr", base, attr)               attribute read
    ("call", index)                    the value of call site `index` of the enclosing function
    ("cmp", ops, operands)             comparison chain, ops like "==", "in", "is not"
    ("not", operand)
    ("bool", "and"|"or", operands)     short-circuit: calls in later operands are conditional
    ("ifexp", test, body, orelse)
    ("environ", var)                   os.environ["VAR"] / os.environ.get("VAR") / os.getenv("VAR")
    ("subscript", base, index)
    ("op", operands)                   any other expression: depends on its parts
Statements are tuples too; see `summarize._StatementBuilder` for each shape.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Dict, Iterator, Optional, Tuple

# The function that stands for a module's top-level code: "pkg.mod.<module>".
MODULE_FUNCTION = "<module>"

Expr = Tuple[Any, ...]
Stmt = Tuple[Any, ...]
Body = Tuple[Stmt, ...]

# How a call names its callee, resolved as far as one module allows:
#   ("qual", "torch.distributed.all_reduce")  a dotted global name (through imports/definitions)
#   ("self", "method")                         self.method() / cls.method() inside a class
#   ("super", "method")                        super().method()
#   ("attr", base_expr, "method")              obj.method(): resolved later from what obj holds
#   ("local", "name")                          a local variable called as a function
#   ("dyn",)                                   anything else (subscripts, call results, ...)
Ref = Tuple[Any, ...]


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


class GuardKeyword(enum.Enum):
    """The statement or expression a condition belongs to."""

    IF = "if"  # `if`, and a conditional expression's test
    ELIF = "elif"
    WHILE = "while"
    FOR = "for"  # the iterable of a `for` (how many rounds it runs)
    ASSERT = "assert"  # `assert cond`, modelled as `if not cond: raise`
    MATCH = "match"  # a `case` of a `match`
    OPERAND = "operand"  # the operands before an `and`/`or` operand decide whether it runs


@dataclass(frozen=True)
class GuardInfo:
    """Where a condition sits and how it reads, for evidence."""

    span: Span
    head: str  # "if rank == 0:"
    condition: str  # "rank == 0"
    keyword: GuardKeyword = GuardKeyword.IF


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

    def caller_params(self) -> Tuple[str, ...]:
        """The parameters a call binds: all but a method's receiver (`self`, `cls`)."""
        return self.params[1:] if self.class_qualname and not self.is_staticmethod else self.params


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

    def function_map(self) -> Dict[str, FunctionSummary]:
        return {f.qualname: f for f in self.functions}


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

