"""The guard against pathological input: a cheap check on source text before libcst sees it.

libcst's native parser has no guard of its own against pathological nesting. Measured with
libcst 1.9 here: 2,000 nested parentheses or brackets (1,000 brackets already take 3 s and 1 GB)
and 5,000 nested lambdas overflow its stack and kill the process with SIGSEGV, no exception to
catch; long chains (`a + b + ...`, `a.b.c...`, `f()()...`, `a[0][0]...`, `not not ...`, `lambda:
lambda: ...`) take time that grows with the square of their length (subscripts: 1,000 take 0.9 s,
2,000 4.6 s, 3,000 13 s; 5,000 attributes, calls or subscripts do not finish in 300 s). CPython
rejects more than 200 nested brackets, and chains from about 3,000 terms (RecursionError).

`too_complex_to_parse` scans the text once with one regular expression (strings and comments
skipped; no tokenizer, it has to stay a small fraction of a parse: 5% of libcst's parse time on
accelerate) and measures:
  * bracket depth: more than 200, Python's own limit, is an error Python reports too;
  * chain cost: per bracket level, how deep and how large one expression is since the last `,`,
    `;`, `=` or line end. A run of operators of one binding power (`+`/`-`, `*`, `.`/call/
    subscript, `not`, `lambda`, a conditional ...) nests one level per operator; a looser
    operator closes the runs of the tighter ones (`a*b + c*d` nests like its `+` run). Each
    operator weighs LINK_WEIGHT, a call CALL_WEIGHT, a subscript SUBSCRIPT_WEIGHT (libcst is
    slower on those). libcst's time grows with depth x size, so that product is bounded: what
    libcst parses in about a second passes (2,000 links of `+`, `.`, `not`, `-`, `lambda` or
    conditionals, 1,333 calls, 1,000 subscripts in one chain, ~900 terms like `3*a*b**2*c` in
    one sum); CPython itself accepts chains up to ~2,900.
No file of accelerate, Megatron-LM, fairseq, torchtitan or this venv's site-packages (105 MB,
including sympy's generated polynomial tables) trips it.
"""

from __future__ import annotations

import ast
import re
from typing import Optional

from rankcheck.program.ir import ParseProblem

# Larger sources are not analysed (RC001). libcst needs ~450 MB and ~14 s per MB of source for a
# summary (a 4 MB generated module: 69 s, 1.9 GB; 50 MB passed 10 GB), compile() ~110 MB per MB.
# The largest file in 105 MB of site-packages (torch, sympy, scipy...) is 1.3 MB; the limit keeps
# the worst file under ~2.5 GB, inside a 7 GB CI runner with room for the rest of the run.
MAX_SOURCE_CHARS = 5 * 2**20
# CPython's tokenizer (MAXLEVEL): 200 open brackets are accepted, the 201st is an error.
MAX_BRACKET_DEPTH = 200
LINK_WEIGHT = 2
CALL_WEIGHT = 3
SUBSCRIPT_WEIGHT = 4
MAX_CHAIN_WEIGHT = 4000
# libcst's time grows with the chain's depth times the expression's size (measured: 1,000 terms
# `a` 0.17 s, `i*a*b**2*c` 1.46 s; 1,800 of the latter 8.9 s). For a pure chain depth = size, so
# this is MAX_CHAIN_WEIGHT for it; a sum of products is refused at ~900 terms (about 1 s).
MAX_CHAIN_COST = MAX_CHAIN_WEIGHT**2

# One alternative per kind of token that matters, each after optional blanks; names are matched
# whole (a keyword is a name too): with every attempt succeeding at its first position, the regex
# engine never retries the alternatives at each character of a name or a run of spaces, which
# makes this about three times faster than skipping them. Strings need no prefix: `rb"..."`
# is the name `rb` then the string, and the name is harmless.
_TOKEN = re.compile(
    r"""
    [ \t\f]*
    (?:
        (?P<name>[^\W\d]\w*)
      | (?P<comment>\#[^\r\n]*)
      | (?P<string>                          # unterminated ones run to the end (of the line)
            '{3}(?:[^'\\]|\\.?|'(?!''))*(?:'{3}|\Z)
          | "{3}(?:[^"\\]|\\.?|"(?!""))*(?:"{3}|\Z)
          | '(?:[^'\\\r\n]|\\.?)*'?
          | "(?:[^"\\\r\n]|\\.?)*"?
        )
      | (?P<number>(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][-+]?\d[\d_]*)?[jJ]?)
      | (?P<continuation>\\(?:\r\n?|\n))
      | (?P<newline>\r\n?|\n)
      | (?P<open>[(\[{])
      | (?P<close>[)\]}])
      | (?P<separator>[,;]|:=|->|=(?!=)|\*\*=|//=|>>=|<<=|[-+*/%@&|^]=)
      | (?P<operator>\*\*|//|<<|>>|<=|>=|==|!=|\.\.\.|[-+*/%@&|^~<>.])
    )
    """,
    re.VERBOSE | re.DOTALL,
)
# Operators by binding power, loosest first: a run of operators of one class nests the syntax
# tree one level per operator (left- or right-nested, libcst recurses either way), and an operator
# of a looser class ends the runs of the tighter ones (`a*b + c*d`: the products are short
# subtrees of a long sum). What nests is the current spine: the runs still open, summed.
_LAMBDA, _TERNARY, _OR, _AND, _NOT, _COMPARE, _BIT_OR, _BIT_XOR, _BIT_AND, _SHIFT, _SUM, _PRODUCT, _UNARY, _POWER, _AWAIT, _TRAILER = range(16)
_KEYWORD_CLASS = {"lambda": _LAMBDA, "if": _TERNARY, "else": _TERNARY, "or": _OR, "and": _AND, "in": _COMPARE, "is": _COMPARE, "await": _AWAIT}
_OPERATOR_CLASS = {
    "<": _COMPARE, ">": _COMPARE, "<=": _COMPARE, ">=": _COMPARE, "==": _COMPARE, "!=": _COMPARE,
    "|": _BIT_OR, "^": _BIT_XOR, "&": _BIT_AND, "<<": _SHIFT, ">>": _SHIFT, "+": _SUM, "-": _SUM,
    "*": _PRODUCT, "/": _PRODUCT, "//": _PRODUCT, "%": _PRODUCT, "@": _PRODUCT, "~": _UNARY,
    "**": _POWER, ".": _TRAILER,
}
# Keywords after which a bracket groups rather than calls (`return (a)`, `yield [x]`).
_STATEMENT_KEYWORDS = frozenset(
    {"return", "yield", "from", "import", "as", "assert", "del", "for", "while", "with", "elif",
     "raise", "except", "global", "nonlocal", "pass", "async",
     "not", "lambda", "if", "else", "or", "and", "in", "is", "await"}
)


class _Spine:
    """The open operator runs of one bracket level ((class, weight) pairs, classes increasing),
    their summed weight (how deep the expression nests) and the weight of every link since the
    last separator (how large it is)."""

    __slots__ = ("depth", "runs", "size")

    def __init__(self) -> None:
        self.runs: list[list[int]] = []
        self.depth = 0
        self.size = 0

    def add(self, cls: int, weight: int) -> int:
        """Adds one link; returns the expression's cost so far (depth x size)."""
        runs = self.runs
        while runs and runs[-1][0] > cls:
            self.depth -= runs.pop()[1]
        if runs and runs[-1][0] == cls:
            runs[-1][1] += weight
        else:
            runs.append([cls, weight])
        self.depth += weight
        self.size += weight
        return self.depth * self.size

    def reset(self) -> None:
        self.runs.clear()
        self.depth = 0
        self.size = 0


def too_complex_to_parse(text: str) -> ParseProblem | None:
    """Why `text` must not be handed to libcst (nesting or a chain beyond what it survives in
    bounded time), with the position where the limit is crossed; None for everything else."""
    problem = too_large_to_parse(text)
    if problem is not None:
        return problem
    levels: list[_Spine] = [_Spine()]  # one per open bracket, the outermost first
    # "operand" after a name, number, string or closing bracket; "is" after `is`
    previous = ""
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "name":
            word = match.group(kind)
            if word not in _STATEMENT_KEYWORDS:
                previous = "operand"
                continue
            if word == "not":  # `a not in b`, `a is not b` compare; `not a` negates
                cls = _COMPARE if previous in ("operand", "is") else _NOT
            elif word in _KEYWORD_CLASS:
                cls = _KEYWORD_CLASS[word]
            else:
                previous = "keyword"
                continue
            previous = "is" if word == "is" else "keyword"
            weight = LINK_WEIGHT
        elif kind == "operator":
            op = match.group(kind)
            if op == "...":  # Ellipsis, a value
                previous = "operand"
                continue
            cls = _OPERATOR_CLASS[op]
            if cls == _SUM and previous != "operand":
                cls = _UNARY  # `-x`, `+x`
            previous = "operator"
            weight = LINK_WEIGHT
        elif kind == "string" or kind == "number":
            # Adjacent strings do not count: libcst reads 2,500 of them in 0.07 s.
            previous = "operand"
            continue
        elif kind == "open":
            if previous == "operand":  # a call or a subscript: a link of the chain
                weight = SUBSCRIPT_WEIGHT if match.group(kind) == "[" else CALL_WEIGHT
                if levels[-1].add(_TRAILER, weight) > MAX_CHAIN_COST:
                    return _chain_problem(text, match.start(kind))
            if len(levels) > MAX_BRACKET_DEPTH:
                return ParseProblem(
                    f"too many nested parentheses: more than {MAX_BRACKET_DEPTH} levels (Python's own limit); "
                    "not analysed",
                    *_position(text, match.start(kind)),
                )
            levels.append(_Spine())
            previous = "open"
            continue
        elif kind == "close":
            if len(levels) > 1:
                levels.pop()
            previous = "operand"
            continue
        elif kind == "newline":
            if len(levels) == 1:
                levels[0].reset()
            previous = "newline"
            continue
        elif kind == "separator":
            levels[-1].reset()
            previous = "separator"
            continue
        else:  # a comment or a backslash continuation: nothing changes
            continue
        if levels[-1].add(cls, weight) > MAX_CHAIN_COST:
            return _chain_problem(text, match.start(kind))
    return None


def too_large_to_parse(text: str) -> ParseProblem | None:
    """An RC001 for a source above MAX_SOURCE_CHARS (generated data, a vendored bundle)."""
    if len(text) <= MAX_SOURCE_CHARS:
        return None
    return too_large_problem(len(text))


def too_large_problem(size: int) -> ParseProblem:
    """The RC001 for a source of `size` characters, or bytes, above MAX_SOURCE_CHARS."""
    return ParseProblem(
        f"file too large to analyse: {size / 2**20:.1f} MB, more than the {MAX_SOURCE_CHARS // 2**20} MB limit "
        "(the parser needs ~450 MB of memory per MB of source); not analysed",
        1,
        1,
    )


def _chain_problem(text: str, offset: int) -> ParseProblem:
    return ParseProblem(
        f"expression too complex to analyse: a chain of more than {MAX_CHAIN_WEIGHT // LINK_WEIGHT:,} operators or "
        f"attributes ({MAX_CHAIN_WEIGHT // CALL_WEIGHT:,} calls, {MAX_CHAIN_WEIGHT // SUBSCRIPT_WEIGHT:,} subscripts), "
        "or a sum of that many long terms, in one expression (the parser's time grows with its square); not analysed",
        *_position(text, offset),
    )


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of `offset`, counting \\r\\n, \\r and \\n as line ends (as Python does)."""
    head = text[:offset]
    line_ends = list(re.finditer(r"\r\n?|\n", head))
    line = len(line_ends) + 1
    line_start = line_ends[-1].end() if line_ends else 0
    return line, offset - line_start + 1


def python_compiles(source: str | bytes, filename: str = "<rankcheck>") -> bool:
    """Whether CPython compiles `source` (text, or bytes decoded its own way); its warnings (odd
    escapes) are not ours to print."""
    return python_ast(source, filename) is not None


def python_ast(source: str | bytes, filename: str = "<rankcheck>") -> Optional[ast.Module]:
    """CPython's own tree of `source`, or None when it does not compile (`python_compiles`)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = compile(source, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return None
    return tree if isinstance(tree, ast.Module) else None
