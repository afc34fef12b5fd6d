"""Parsing an edited buffer again: only the top-level statements the edit changed.

The language server summarizes the open buffer after every edit. libcst parses about 10k lines/s
here, so a 1,000-line buffer costs ~90 ms to parse: the largest single part of a re-diagnosis.
Typing changes one top-level statement (a function, a class), and libcst trees are immutable, so
a new tree can share every other statement with the previous one: `RecentParses` parses the
lines of that statement alone and puts the new node in place of the old one. An edit that spans
several statements parses them together.

Why the result is the tree a full parse gives. A top-level statement starts at column 0, outside
any bracket or string, and the lines after it (the next statement's leading blank and comment
lines, or the end of the file) start at column 0 as well: the tokenizer reads the statement's
lines alone as it reads them in the file. Its lines are taken as the previous parse attributed
them: from its first line (its first decorator) to the line before the next statement's leading
lines; the blank and comment lines in front of it stay the previous tree's. The splice is kept
only when the new lines parse with no line left over in front of the statements or after them,
with the file's indentation unit and line ending (a block at the file's default indentation
carries no indentation of its own in the tree). The whole text is parsed otherwise, when the
edit reaches outside those lines, and in a file with a form feed (libcst's parse of a line then
depends on lines after it). tests/test_reparse.py compares the two over generated edits of the
corpus, node for node and position for position.
"""

from __future__ import annotations

import bisect
import re
from collections import OrderedDict
from typing import Dict, List, Optional, Tuple

import libcst as cst

from rankcheck.frontend.parse import parse_module, parse_unvalidated
from rankcheck.frontend.positions import Range, locate_statements

# A line as libcst and the tokenizer count them: ended by "\n", "\r\n" or a lone "\r" (not by the
# form feeds and other separators `str.splitlines` also splits on).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class _Parse:
    __slots__ = ("text", "module", "ranges", "first_lines")

    def __init__(self, text: str, module: cst.Module, ranges: Dict[int, Range], first_lines: List[int]) -> None:
        self.text = text
        self.module = module
        self.ranges = ranges
        self.first_lines = first_lines  # 1-based first line of each top-level statement


class RecentParses:
    """The last parse tree of a few files, by key (the language server's open buffers)."""

    def __init__(self, capacity: int = 2) -> None:
        # Small: a 1,000-line tree holds ~100k nodes; an editor types into one buffer at a time.
        self.capacity = capacity
        self._parses: OrderedDict[str, _Parse] = OrderedDict()
        self.spliced = 0  # parses answered by a splice (for tests)

    def parse(self, key: str, text: str) -> Tuple[cst.Module, Optional[Dict[int, Range]]]:
        """`nesting.parse_module(text)`, from the previous tree of `key` where the edit allows, with
        the tree's node ranges when they come with it (`positions.node_ranges`, else None);
        raises what a full parse raises."""
        previous = self._parses.get(key)
        if previous is not None:
            if previous.text == text:
                return previous.module, previous.ranges
            spliced = _splice(previous, text)
            if spliced is not None:
                self.spliced += 1
                return spliced
        return parse_module(text), None

    def remember(self, key: str, text: str, module: cst.Module, ranges: Dict[int, Range]) -> None:
        """Keep `module`, parsed from `text`, and its ranges."""
        first_lines = []
        for statement in module.body:
            decorators = getattr(statement, "decorators", None)
            node = decorators[0] if decorators else statement
            first_lines.append(ranges[id(node)][0])
        self._parses[key] = _Parse(text, module, ranges, first_lines)
        self._parses.move_to_end(key)
        while len(self._parses) > self.capacity:
            self._parses.popitem(last=False)


def _changed_lines(old: List[str], new: List[str]) -> Tuple[int, int]:
    """The old lines [start, end) that differ, once the lines both share at either end are put
    aside (end == start: lines were only inserted, before line `start`)."""
    shortest = min(len(old), len(new))
    start = 0
    while start < shortest and old[start] == new[start]:
        start += 1
    same_tail = 0
    while same_tail < shortest - start and old[-1 - same_tail] == new[-1 - same_tail]:
        same_tail += 1
    return start, len(old) - same_tail


def _splice(previous: _Parse, text: str) -> Optional[Tuple[cst.Module, Dict[int, Range]]]:
    module = previous.module
    body = module.body
    first_lines = previous.first_lines
    if not body or text.startswith("\ufeff") or not module.has_trailing_newline or "\x0c" in text:
        # A byte order mark or the lack of a final line ending is the module's. Around a form
        # feed libcst's parse of unchanged lines depends on lines after them (the comment lines
        # in front of a statement), so no statement can be parsed alone.
        return None
    old_lines = _LINE.findall(previous.text)
    new_lines = _LINE.findall(text)
    start, end = _changed_lines(old_lines, new_lines)

    def lines_end(k: int) -> int:
        """Where statement k's lines end (0-based, exclusive): at the next one's leading lines."""
        if k + 1 < len(body):
            return first_lines[k + 1] - 1 - len(body[k + 1].leading_lines)
        return len(old_lines) - len(module.footer)

    # The statements whose lines hold the change: i to j, lines [first, last) (0-based).
    i = bisect.bisect_right(first_lines, start + 1) - 1
    j = bisect.bisect_right(first_lines, max(end - 1, start) + 1) - 1
    if i < 0 or start >= lines_end(i) or end > lines_end(j):
        return None  # the change reaches the lines between statements, or the header
    first, last = first_lines[i] - 1, lines_end(j)
    delta = len(new_lines) - len(old_lines)
    lines = new_lines[first : last + delta]
    if not lines or not lines[-1].endswith(("\n", "\r")):
        return None
    try:
        alone = parse_unvalidated("".join(lines))
    except (cst.ParserSyntaxError, RecursionError):
        return None  # the full parse says what is wrong, and where
    if (
        not alone.body
        or alone.body[0].leading_lines
        or alone.header
        or alone.footer
        or alone.default_indent != module.default_indent
        or alone.default_newline != module.default_newline
    ):
        return None
    statements = (alone.body[0].with_changes(leading_lines=body[i].leading_lines), *alone.body[1:])
    spliced = module.with_changes(body=(*body[:i], *statements, *body[j + 1 :]))

    # Ranges: the statements before keep theirs, those after move by the lines added; the new
    # ones are located by generating their code from where the first one's leading lines begin.
    ranges: Dict[int, Range] = {}
    for key, where in previous.ranges.items():
        if where[0] <= first:
            ranges[key] = where
        elif where[0] > last:
            ranges[key] = (where[0] + delta, where[1], where[2] + delta, where[3])
    try:
        locate_statements(module, statements, first + 1 - len(body[i].leading_lines), ranges)
    except RecursionError:
        return None
    return spliced, ranges
