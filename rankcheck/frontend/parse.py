"""The libcst parse, with the workarounds for valid Python that libcst 1.9 rejects.

`parse_module` retries a file Python compiles but libcst's tokenizer rejects (indentation that
mixes a form feed, or a tab after spaces, into a deeper block; a line holding only `\\` before a
dedented `else:`/`finally:`) on the text written in the form libcst always reads, with the same
line numbers. `parse_unvalidated` skips the checks libcst runs on every node it builds.
"""

from __future__ import annotations

import re
import threading

import libcst

from rankcheck.frontend.guard import python_compiles

# The leading whitespace of a line that mixes in a form feed or a tab.
_MIXED_INDENT = re.compile(r"^[ \t\f]*[\t\f][ \t\f]*(?=[^ \t\f\r\n])", re.MULTILINE)
TAB_SIZE = 8  # Python's tokenizer: a tab moves to the next multiple of 8


def normalise_indentation(text: str) -> str:
    """`text` with every indentation that holds a tab or a form feed written as the spaces Python
    counts for it (a tab to the next multiple of 8, a form feed back to column 0): the same
    program, in the one form libcst's tokenizer always reads. Line numbers are unchanged; columns
    on the lines touched move."""
    if "\t" not in text and "\f" not in text:
        return text
    return _MIXED_INDENT.sub(lambda match: " " * _indent_width(match.group()), text)


# A line that holds nothing but a line continuation, and the indentation of the line it joins.
_LONE_CONTINUATION = re.compile(r"^([ \t\f]*)\\(\r\n?|\n)[ \t\f]*", re.MULTILINE)


def normalise_lone_continuations(text: str) -> str:
    """`text` with every line that holds only a `\\` and starts a logical line made blank, and the
    line it joins indented as that line was (Python takes a logical line's indentation from its
    first physical line): the same program, which libcst 1.9 rejects when the joined line is a
    dedented `else:` or `finally:`. Line numbers are unchanged; columns on the joined lines move."""
    if "\\" not in text:
        return text

    def blank(match: re.Match[str]) -> str:
        # A line that continues the one before it (`finally:\\`) is not where a logical line starts.
        before = match.start()
        if before > 0 and text[before - 1] == "\n":
            before -= 1
        if before > 0 and text[before - 1] == "\r":
            before -= 1
        if before > 0 and text[before - 1] == "\\":
            return match.group()
        return match.group(2) + match.group(1)

    return _LONE_CONTINUATION.sub(blank, text)


def _indent_width(whitespace: str) -> int:
    column = 0
    for char in whitespace:
        if char == "\f":
            column = 0
        elif char == "\t":
            column = (column // TAB_SIZE + 1) * TAB_SIZE
        else:
            column += 1
    return column


def parse_module(text: str) -> libcst.Module:
    """`libcst.parse_module(text)`, and once more on the text normalised when libcst rejects a
    file that Python compiles: libcst 1.9's tokenizer reports "no matching outer block for dedent"
    on valid indentation that mixes a form feed, or a tab after spaces, into a deeper block
    (`if x:\\n class A:\\n\\t pass`; `normalise_indentation`), and rejects a line holding only a
    `\\` before a dedented `else:` or `finally:` (`normalise_lone_continuations`). When that fails
    too, libcst's first error is raised, as without this."""
    try:
        return parse_unvalidated(text)
    except libcst.ParserSyntaxError as exc:
        error = exc
    normalised = normalise_indentation(normalise_lone_continuations(text))
    if normalised != text and python_compiles(text):
        try:
            return parse_unvalidated(normalised)
        except libcst.ParserSyntaxError:
            pass
    raise error


_PARSE_LOCK = threading.Lock()


def parse_unvalidated(text: str) -> libcst.Module:
    """`libcst.parse_module(text)` without the check every node runs on itself when it is built.

    The check (`CSTNode._validate`, run from `__post_init__`) is for trees code builds by hand;
    on the parser's own output it finds nothing (the parser only builds what the grammar allows),
    yet it is about a fifth of the parse (measured on Megatron-LM's core package: 3.9 s -> 3.2 s
    for 300 files). So it is switched off for the parse only. The lock keeps the switch to one
    parse at a time: another thread building nodes meanwhile would skip its checks too, and two
    parses would restore each other's state in the wrong order."""
    from libcst._nodes.base import CSTNode

    with _PARSE_LOCK:
        validating = CSTNode.__dict__.get("__post_init__")
        if validating is None:  # a libcst without the hook: nothing to switch off
            return libcst.parse_module(text)
        setattr(CSTNode, "__post_init__", _no_validation)  # noqa: B010 - the type checker rightly objects to assigning a method
        try:
            return libcst.parse_module(text)
        finally:
            setattr(CSTNode, "__post_init__", validating)  # noqa: B010


def _no_validation(node: object) -> None:
    return None
