"""`rankcheck stacks DUMPS...`: stacks gathered by hand from every rank of a job that was not
armed (torch-free). Reads faulthandler tracebacks, `py-spy dump` text and `py-spy dump --json`,
the stacks dumps of torch's `torch.distributed.debug` server (one file, `=== Rank N: ... ===`
sections), and a guard bundle's stacks. Groups the ranks by where their main thread is, names
the odd ones out and the frame where they part from the others: when most ranks are blocked in
a collective, the one somewhere else is the answer.
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from rankcheck.fr.analyze import ranks_text
from rankcheck.fr.frames import is_user_frame
from rankcheck.fr.model import Frame
from rankcheck.fr.reader import rank_from_filename

_FAULT_THREAD = re.compile(r"^(?:Current thread|Thread) (0x[0-9a-fA-F]+)", re.MULTILINE)
_FAULT_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<func>.+?)\s*$')
_SPY_THREAD = re.compile(r'^Thread (\S+) \((?P<state>[^)]*)\)(?:: "(?P<name>[^"]*)")?', re.MULTILINE)
_SPY_FRAME = re.compile(r"^\s+(?P<func>.+?) \((?P<path>.+?):(?P<line>\d+)\)\s*$")
_DEBUG_SECTION = re.compile(r"^=== Rank (\d+)(?::[^=]*)? ===\s*$", re.MULTILINE)
_COLLECTIVE_FILE = re.compile(r"(^|[/\\])torch[/\\]distributed[/\\](distributed_c10d|c10d_logger)\.py$")


class StackError(Exception):
    pass


@dataclass(frozen=True)
class RankStack:
    rank: int
    source: str  # the file it came from
    frames: Tuple[Frame, ...]  # the main thread, outermost first

    @property
    def in_collective(self) -> bool:
        return any(_COLLECTIVE_FILE.search(f.filename) for f in self.frames)

    @property
    def user(self) -> Tuple[Frame, ...]:
        return tuple(f for f in self.frames if is_user_frame(f))

    def key(self) -> Tuple[Tuple[str, int, str], ...]:
        """Where the rank is: its user frames (the library frames below them vary with timing)."""
        return tuple((f.filename, f.line, f.function) for f in self.user)


def _main_of_faulthandler(text: str) -> List[Frame]:
    starts = [m.start() for m in _FAULT_THREAD.finditer(text)] or [0]
    blocks = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    # The main thread's stack ends in <module> (the script); otherwise take the current thread.
    chosen = next((b for b in blocks if "<module>" in b), None) or next(
        (b for b in blocks if b.startswith("Current thread")), blocks[0])
    frames = []
    for line in chosen.splitlines():
        match = _FAULT_FRAME.match(line)
        if match:
            frames.append(Frame(match["path"], int(match["line"]), match["func"]))
    return list(reversed(frames))  # faulthandler writes the most recent call first


def _main_of_py_spy_text(text: str) -> List[Frame]:
    threads: List[Tuple[str, List[Frame]]] = []
    for line in text.splitlines():
        thread = _SPY_THREAD.match(line)
        if thread:
            threads.append((thread["name"] or "", []))
            continue
        frame = _SPY_FRAME.match(line)
        if frame and threads:
            threads[-1][1].append(Frame(frame["path"], int(frame["line"]), frame["func"]))
    if not threads:
        return []
    _name, frames = next((t for t in threads if t[0] == "MainThread"), threads[0])
    return list(reversed(frames))


def _main_of_py_spy_json(data: object) -> List[Frame]:
    threads = data if isinstance(data, list) else [data]
    chosen = next((t for t in threads if isinstance(t, dict) and t.get("thread_name") == "MainThread"),
                  threads[0] if threads else None)
    if not isinstance(chosen, dict):
        raise StackError("not a py-spy --json dump")
    frames = [Frame(str(f.get("filename", "?")), int(f.get("line", 0)), str(f.get("name", "?")))
              for f in chosen.get("frames") or () if isinstance(f, dict)]
    return list(reversed(frames))


def _main_of_guard_json(data: list) -> List[Frame]:
    for thread in data:
        if isinstance(thread, dict) and thread.get("main"):
            return list(reversed([Frame(str(f[0]), int(f[1]), str(f[2])) for f in thread.get("frames") or ()]))
    return []


def parse_text(text: str) -> List[Frame]:
    """The main thread's frames (outermost first) of one rank's dump, whatever wrote it."""
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        try:
            data = json.loads(stripped)
        except ValueError as exc:
            raise StackError(f"not valid JSON: {exc}") from exc
        if isinstance(data, list) and data and isinstance(data[0], dict) and "main" in data[0]:
            return _main_of_guard_json(data)
        return _main_of_py_spy_json(data)
    if _FAULT_THREAD.search(text) or "Stack (most recent call first)" in text:
        return _main_of_faulthandler(text)
    if _SPY_THREAD.search(text):
        return _main_of_py_spy_text(text)
    raise StackError("neither a faulthandler traceback nor a py-spy dump")


def _files(target: str) -> List[str]:
    if os.path.isdir(target):
        found = []
        for folder, _dirs, names in os.walk(target):
            for name in names:
                if name in ("stacks.json", "stacks.txt") or re.search(r"(stack|spy|trace|dump)", name, re.I):
                    if not name.startswith("fr_trace"):
                        found.append(os.path.join(folder, name))
        # a bundle's rank directory has the same stacks three ways: its stacks.json is enough
        return sorted(f for f in found if os.path.basename(f) == "stacks.json"
                      or not os.path.exists(os.path.join(os.path.dirname(f), "stacks.json")))
    return [target]


def _rank_of(path: str, index: int) -> int:
    folder = re.search(r"rank-(\d+)$", os.path.dirname(path))
    if folder:
        return int(folder.group(1))
    rank = rank_from_filename(os.path.splitext(path)[0]) if re.search(r"\d", os.path.basename(path)) else None
    return rank if rank is not None else index


def read_stacks(targets: Sequence[str]) -> Tuple[List[RankStack], List[str]]:
    """Every rank's main-thread stack, and the errors (a bad file is named; the rest is read)."""
    stacks: List[RankStack] = []
    errors: List[str] = []
    paths = [p for t in targets for p in _files(t)]
    for index, path in enumerate(paths):
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError as exc:
            errors.append(f"{path}: cannot read: {exc.strerror or exc}")
            continue
        sections = _DEBUG_SECTION.split(text)
        try:
            if len(sections) > 1:  # torch.distributed.debug: one file, every rank
                for rank, body in zip(sections[1::2], sections[2::2]):
                    stacks.append(RankStack(int(rank), path, tuple(parse_text(body))))
            else:
                stacks.append(RankStack(_rank_of(path, index), path, tuple(parse_text(text))))
        except StackError as exc:
            errors.append(f"{path}: {exc}")
    stacks.sort(key=lambda s: s.rank)
    return stacks, errors


@dataclass(frozen=True)
class Group:
    ranks: Tuple[int, ...]
    stack: RankStack  # one representative

    def where(self) -> str:
        frame = (self.stack.user or self.stack.frames or (None,))[-1]
        return f"{frame.filename}:{frame.line} {frame.function}" if frame else "no frames"


@dataclass(frozen=True)
class StacksReport:
    groups: Tuple[Group, ...]  # the biggest first
    odd: Tuple[Group, ...]
    parting: Dict[int, Tuple[Optional[Frame], Optional[Frame]]]  # odd rank -> (majority's, its frame)


def group_stacks(stacks: Sequence[RankStack]) -> StacksReport:
    by_key: Dict[tuple, List[RankStack]] = defaultdict(list)
    for stack in stacks:
        by_key[(stack.key(), stack.in_collective)].append(stack)
    groups = sorted((Group(tuple(s.rank for s in members), members[0]) for members in by_key.values()),
                    # equal sides: the ranks in a collective are the ones waiting, the others the odd
                    key=lambda g: (-len(g.ranks), not g.stack.in_collective, g.ranks[0]))
    if len(groups) < 2:
        return StacksReport(tuple(groups), (), {})
    majority = groups[0]
    odd = tuple(g for g in groups[1:] if len(g.ranks) < len(majority.ranks)) or tuple(groups[1:])
    parting = {}
    for group in odd:
        theirs, ours = majority.stack.user, group.stack.user
        depth = next((i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b), min(len(theirs), len(ours)))
        parting[group.ranks[0]] = (theirs[depth] if depth < len(theirs) else None,
                                   ours[depth] if depth < len(ours) else None)
    return StacksReport(tuple(groups), odd, parting)


def _frame_text(frame: Optional[Frame]) -> str:
    return f"{frame.filename}:{frame.line} {frame.function}" if frame else "(nothing deeper)"


def render_text(report: StacksReport) -> str:
    lines = []
    for group in report.groups:
        state = "blocked in a collective" if group.stack.in_collective else "not in a collective"
        lines.append(f"{ranks_text(group.ranks)}: {state}, at {group.where()}")
    if report.odd:
        majority = report.groups[0]
        for group in report.odd:
            ours_theirs = report.parting.get(group.ranks[0], (None, None))
            lines.append(
                f"odd one out: {ranks_text(group.ranks)} (the others: {ranks_text(majority.ranks)}); they part at "
                f"{_frame_text(ours_theirs[0])} (others) vs {_frame_text(ours_theirs[1])} (this)"
            )
        if majority.stack.in_collective and not any(g.stack.in_collective for g in report.odd):
            lines.append("most ranks are blocked in a collective; the odd one is somewhere else: "
                         "that is where to look")
    elif report.groups:
        lines.append("every rank is at the same place")
    return "\n".join(lines) + "\n"


def render_json(report: StacksReport) -> str:
    def group_json(group: Group) -> dict:
        return {"ranks": list(group.ranks), "in_collective": group.stack.in_collective,
                "where": group.where(),
                "frames": [[f.filename, f.line, f.function] for f in group.stack.user]}

    parting = {str(r): [[f.filename, f.line, f.function] if f else None for f in pair]
               for r, pair in report.parting.items()}
    return json.dumps({"groups": [group_json(g) for g in report.groups],
                       "odd": [group_json(g) for g in report.odd], "parting": parting}, indent=1) + "\n"
