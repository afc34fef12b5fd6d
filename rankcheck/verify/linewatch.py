"""Notes whether (and when) the flagged source lines run on this rank.

A finding can only be confirmed or refuted if its line ran; a `return` on rank 1 or an extra
`all_reduce` on rank 0 shows up as a line that ran on one rank and not the other. Only frames of
the watched files get a line tracer, so the rest of the program (torch included) runs at nearly
full speed.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, Optional


class LineWatcher:
    def __init__(self, watch: dict[str, list[int]], collective_count: Callable[[], int]) -> None:
        self._lines = {os.path.realpath(path): set(lines) for path, lines in watch.items() if lines}
        self._by_filename: dict[str, Optional[set]] = {}
        self._count = collective_count
        # (path, line) -> [count, first_after, last_after]
        self.hits: dict[tuple[str, int], list[int]] = {}

    def _watched(self, filename: str) -> Optional[set]:
        if filename not in self._by_filename:
            self._by_filename[filename] = self._lines.get(os.path.realpath(filename))
        return self._by_filename[filename]

    def _on_call(self, frame, event, arg):
        lines = self._watched(frame.f_code.co_filename)
        if lines is None:
            return None
        path = os.path.realpath(frame.f_code.co_filename)

        def on_line(frame, event, arg):
            if event == "line" and frame.f_lineno in lines:
                after = self._count()
                hit = self.hits.get((path, frame.f_lineno))
                if hit is None:
                    self.hits[(path, frame.f_lineno)] = [1, after, after]
                else:
                    hit[0] += 1
                    hit[2] = after
            return on_line

        return on_line

    def start(self) -> None:
        if self._lines:
            sys.settrace(self._on_call)

    def stop(self) -> None:
        if self._lines:
            sys.settrace(None)

    def snapshot(self) -> list[list]:
        return [[path, line, *counts] for (path, line), counts in self.hits.items()]
