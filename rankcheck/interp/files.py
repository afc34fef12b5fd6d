"""Files some ranks write, which the others look for.

A job that writes a file on rank 0 only (a trainer state, a sharding plan, a cache) and tests
for it on every rank (`if path.exists():`) asks each process a question of its own: a process
that looks before rank 0 has written the file, or through a shared filesystem's stale cache,
gets another answer, and the ranks part at the test (KempnerForge#49, FastVideo#598).

Which file a path names is read from how it is written: the string constants it is built from
(`ckpt_dir / "train_state.pt"`, `os.path.join(out, "plan.pkl")`, through the local variables it
is assigned to), and, within one function, the variable that holds it. A write made under a
test of the rank stores each of those words as a module-level store (Interpreter's "gstore",
key `(FILES, "scope|word")`), learned over the binding rounds like a `global`; a test for a file
whose path shares a word with one reads it back as per-rank data, unless the test follows the
write in the same function past a collective that orders them (`synchronised_after`).

The scope is the class whose methods write and test (a checkpoint manager's `save` and `load`),
or the one function that does both (a cache built on rank 0 under a test for it): the protocol
a piece of code keeps with itself. A file found by one component and written by another (a
runner's resume looking for what its checkpoint hook wrote in an earlier job) is not followed.
"""

from __future__ import annotations

from typing import Collection, FrozenSet, Optional, Set

from rankcheck.interp.base import plain_reference
from rankcheck.program.ir import CallSite, Expr, FunctionSummary, render_expr, statements

FILES = "<files>"  # the module part of the store keys of written files

# A constant is a file's name when it has a letter and is not a bare suffix or a mode (`.pt`, "wb").
MIN_NAME_LENGTH = 4
# `open(path, mode)`: a mode with one of these letters writes (creates, truncates or appends).
WRITING_MODE_LETTERS = frozenset("wax+")


def path_words(fn: FunctionSummary, expr: Expr, other_paths: Collection[str]) -> FrozenSet[str]:
    """The words that say which file `expr` names: its string constants (the last part of a
    path written with `/`), those of what the local variables it reads were assigned, and the
    variables themselves, qualified by the function (`fn:sharding_info_dir`). `other_paths`: the
    attributes of a path that name another one (`p.parent`, catalog `[files] other_paths`)."""
    words: Set[str] = set()
    _collect(fn, expr, words, True, other_paths)
    return frozenset(words)


def _collect(fn: FunctionSummary, expr: Expr, words: Set[str], follow: bool, other_paths: Collection[str]) -> None:
    tag = expr[0] if isinstance(expr, tuple) and expr else None
    if tag == "const":
        if isinstance(expr[1], str):
            name = expr[1].rstrip("/").rsplit("/", 1)[-1]
            if len(name) >= MIN_NAME_LENGTH and not name.startswith(".") and any(c.isalpha() for c in name):
                words.add(name)
    elif tag == "name":
        words.add(f"{fn.qualname}:{expr[1]}")
        if follow:
            for value in _assigned(fn, expr[1]):
                _collect(fn, value, words, False, other_paths)
    elif tag == "attr":
        # `self.root`, `args.out`: one path as a whole. An attribute of a path (`p.parent`,
        # `p.stem`) is another path: nothing of `p` is it.
        if plain_reference(expr) and expr[2] not in other_paths:
            words.add(f"{fn.qualname}:{render_expr(expr)}")
    elif tag == "call":
        if isinstance(expr[1], int) and expr[1] < len(fn.calls):
            site = fn.calls[expr[1]]
            for arg in site.args:
                _collect(fn, arg, words, follow, other_paths)
    elif tag is not None:
        for part in expr[1:]:
            if isinstance(part, tuple):
                if part and isinstance(part[0], str):
                    _collect(fn, part, words, follow, other_paths)
                else:
                    for item in part:
                        if isinstance(item, tuple) and item and isinstance(item[0], str):
                            _collect(fn, item, words, follow, other_paths)


def _assigned(fn: FunctionSummary, name: str) -> list:
    """What the function assigns to the variable `name` (a single target)."""
    return [stmt[2] for stmt in statements(fn.body)
            if stmt[0] == "assign" and len(stmt[1]) == 1 and stmt[1][0] == ("name", name)]


def opened_for_writing(site: CallSite) -> bool:
    """`open(path, "wb")`, `open(path, mode="a")`: the mode as written creates or changes the file."""
    mode: Optional[Expr] = site.args[1] if len(site.args) > 1 else dict(site.kwargs).get("mode")
    return mode is not None and mode[0] == "const" and isinstance(mode[1], str) and bool(WRITING_MODE_LETTERS & set(mode[1]))


def written_path(site: CallSite, position: int) -> Optional[Expr]:
    """The path argument of a writing call: positional `position`, or the receiver where -1."""
    if position < 0:
        return site.callee[1] if site.callee[0] == "attr" else None
    return site.args[position] if position < len(site.args) else None


def synchronised_after(fn: FunctionSummary, write_line: int, test_line: int, collective_names: Collection[str]) -> bool:
    """The function itself meets the other ranks between a write it makes and its test for the
    file (`flag.touch()` on rank 0, `barrier()`, then `if flag.exists(): break` on every rank,
    RTG's early stop): the test comes after the file is there. A call between the two lines whose
    name is a collective's (`distr.barrier()`) is taken for that meeting."""
    if not fn.span.line <= write_line < test_line:
        return False
    for site in fn.calls:
        if write_line < site.span.line < test_line:
            last = site.callee[2] if site.callee[0] == "attr" else str(site.callee[1]).rsplit(".", 1)[-1]
            if last in collective_names:
                return True
    return False


def scope(fn: FunctionSummary) -> str:
    """Where a write and a test of one file are taken for one protocol (module doc)."""
    return fn.class_qualname or fn.qualname

