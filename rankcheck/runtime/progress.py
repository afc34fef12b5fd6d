"""One rank's progress, kept cheaply on the hot path and read by the watchdog thread (torch-free).

A collective's entry and return, and a training step, each cost a few attribute stores and one
clock read; everything that costs more (snapshots, medians, files) happens on the watchdog's
thread. The numbers are the heartbeat: the last collective of each process group (its sequence
number, op and the user line that called it), whether the rank is inside it now, the step
counter and the recent step times split into compute and time spent waiting in collectives.
"""

from __future__ import annotations

import time
from collections import deque
from types import FrameType
from typing import Any, Deque, Dict, List, Optional, Tuple

from rankcheck.verify.frames import is_user_file

Site = Tuple[str, int, str]
STEP_WINDOW = 32


def user_sites(frame: Optional[FrameType], limit: int = 3) -> List[Site]:
    """The innermost user frames from `frame` outwards: the line that called the collective."""
    sites: List[Site] = []
    while frame is not None and len(sites) < limit:
        code = frame.f_code
        if is_user_file(code.co_filename):
            sites.append((code.co_filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    return sites


class Progress:
    def __init__(self, rank: int) -> None:
        self.rank = rank
        self.last_progress = time.time()
        # group key -> [seq, op, sites, entered_at, returned_at or None]
        self.groups: Dict[str, list] = {}
        self.group_names: Dict[str, str] = {}
        self.current: Optional[str] = None  # the group key of the collective we are inside
        self.collectives = 0
        self.waiting_s = 0.0  # total time inside collectives
        self.steps = 0
        self.step_started = self.last_progress
        self.step_waiting_mark = 0.0
        # (wall seconds, seconds of it in collectives) per recent step
        self.step_times: Deque[Tuple[float, float]] = deque(maxlen=STEP_WINDOW)
        self.gaps: Deque[float] = deque(maxlen=STEP_WINDOW)  # between collectives, no steps

    # ---- the hot path -------------------------------------------------------------------------
    def entered(self, key: str, name: str, op: str, seq: int, frame: Optional[FrameType]) -> None:
        now = time.time()
        if not self.steps and self.collectives:
            self.gaps.append(now - self.last_progress)
        self.collectives += 1
        self.groups[key] = [seq, op, user_sites(frame), now, None]
        if key not in self.group_names:
            self.group_names[key] = name
        self.current = key
        self.last_progress = now

    def returned(self) -> None:
        now = time.time()
        key = self.current
        if key is not None:
            record = self.groups[key]
            record[4] = now
            self.waiting_s += now - record[3]
        self.current = None
        self.last_progress = now

    def step(self) -> None:
        now = time.time()
        self.step_times.append((now - self.step_started, self.waiting_s - self.step_waiting_mark))
        self.step_started = now
        self.step_waiting_mark = self.waiting_s
        self.steps += 1
        self.last_progress = now

    # ---- the watchdog's side ------------------------------------------------------------------
    def snapshot(self) -> Dict[str, Any]:
        groups = {}
        for key, (seq, op, sites, entered, returned) in list(self.groups.items()):
            groups[key] = {
                "name": self.group_names.get(key, key),
                "seq": seq,
                "op": op,
                "sites": [list(s) for s in sites],
                "entered": entered,
                "returned": returned,
            }
        current = self.current
        return {
            "rank": self.rank,
            "last_progress": self.last_progress,
            "collectives": self.collectives,
            "in_collective": current,
            "groups": groups,
            "steps": self.steps,
            "step_times": [list(t) for t in list(self.step_times)],
            "gaps": list(self.gaps),
        }

