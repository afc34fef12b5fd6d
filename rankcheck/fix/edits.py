"""Text edits: from a fixed module's code to the one edit that turns the old text into it, and
back; and the unified diff `--diff` prints."""

from __future__ import annotations

import difflib
from typing import List, Optional, Sequence, Tuple

from rankcheck.ftypes import Edit, Location


def edit_between(path: str, old: str, new: str) -> Optional[Edit]:
    """The whole lines of `old` that differ from `new`, as one edit (None when they are equal)."""
    if old == new:
        return None
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    start = Location(path, head + 1, 1)
    end = Location(path, len(a) - tail + 1, 1)
    return Edit(location=start, end=end, content="".join(b[head : len(b) - tail]))


def _offset(lines: Sequence[str], line: int, column: int) -> int:
    return sum(len(text) for text in lines[: line - 1]) + column - 1


def apply_edits(text: str, edits: Sequence[Edit]) -> Tuple[str, List[Edit]]:
    """`text` with the edits that do not overlap an earlier one applied; and those applied.
    (Overlapping fixes wait for the next round, as ruff's do.)"""
    lines = text.splitlines(keepends=True)
    spans = sorted(((_offset(lines, e.location.line, e.location.column), _offset(lines, e.end.line, e.end.column), e) for e in edits), key=lambda s: (s[0], s[1]))
    chosen: List[Tuple[int, int, Edit]] = []
    for start, stop, edit in spans:
        if chosen and start < chosen[-1][1]:
            continue
        chosen.append((start, stop, edit))
    out = text
    for start, stop, edit in reversed(chosen):
        out = out[:start] + edit.content + out[stop:]
    return out, [edit for _, _, edit in chosen]


def unified_diff(path: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), fromfile=f"a/{path}", tofile=f"b/{path}"))
