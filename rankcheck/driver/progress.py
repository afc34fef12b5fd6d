"""A progress bar on stderr for long runs, and silence everywhere else.

Shown only when stderr is a terminal (never in pipes, CI logs, tests or the language server) and
only once a run has taken more than `DELAY` seconds, so a warm run never flickers. `NO_PROGRESS`
or `TERM=dumb` turn it off.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Optional, TextIO

DELAY = 1.0
REFRESH = 0.1
WIDTH = 30


def _wanted(stream: TextIO) -> bool:
    if os.environ.get("NO_PROGRESS") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


class Progress:
    def __init__(self, label: str = "summarizing", stream: Optional[TextIO] = None, enabled: Optional[bool] = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _wanted(self.stream) if enabled is None else enabled
        self.label = label
        self.started = time.monotonic()
        self.total = 0
        self.done = 0
        self._last_draw = 0.0
        self._drawn = False

    def add_total(self, count: int) -> None:
        self.total += count
        self._draw()

    def advance(self, count: int = 1) -> None:
        self.done += count
        self._draw()

    def _draw(self) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.started < DELAY or now - self._last_draw < REFRESH:
            return
        self._last_draw = now
        total = max(self.total, 1)
        filled = int(WIDTH * min(self.done, total) / total)
        bar = "#" * filled + "-" * (WIDTH - filled)
        try:
            self.stream.write(f"\rrankcheck: {self.label} [{bar}] {self.done}/{self.total} files")
            self.stream.flush()
            self._drawn = True
        except (OSError, ValueError):
            self.enabled = False

    def close(self) -> None:
        if self._drawn:
            try:
                self.stream.write("\r\x1b[2K")
                self.stream.flush()
            except (OSError, ValueError):
                pass
        self._drawn = False
