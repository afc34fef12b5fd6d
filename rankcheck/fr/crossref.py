"""`--source`: did rankcheck's static analysis flag the line the flight recorder points at?

A finding matches a recorded frame when the frame's file:line is the finding's own line, its
guard's line, or one of its call-chain lines. Every Python frame of the divergent entry inside
the source tree is tried, innermost first, so a collective reached through a helper matches the
finding on the call site as well as the one on the helper.
"""

from __future__ import annotations

import os
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from rankcheck.fr.analyze import (
    AHEAD,
    BEHIND,
    MISMATCH,
    MISSING,
    SPLIT,
    Analysis,
    StaticCheck,
    Verdict,
    ranks_text,
    with_static,
)
from rankcheck.fr.frames import is_python_frame, is_user_frame, local_path
from rankcheck.fr.model import Entry, Frame
from rankcheck.ftypes import Finding, Location

# Verdicts that point at a divergent collective worth looking up.
CROSS_REFERENCED = frozenset({MISMATCH, BEHIND, AHEAD, SPLIT, MISSING})

Key = Tuple[str, int]


def _absolute(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


def finding_index(findings: Iterable[Finding]) -> Dict[Key, Tuple[Finding, str]]:
    """(absolute path, line) -> (finding, which part of it is on that line)."""
    index: Dict[Key, Tuple[Finding, str]] = {}

    def add(location: Optional[Location], finding: Finding, role: str) -> None:
        if location is None:
            return
        key = (_absolute(location.path), location.line)
        index.setdefault(key, (finding, role))

    for finding in findings:
        add(finding.location, finding, "its line")
    for finding in findings:
        guard = getattr(finding, "guard", None)
        add(guard.location if guard is not None else None, finding, "its rank guard")
        for step in getattr(finding, "chain", ()) or ():
            add(step.location, finding, "its call chain")
    return index


def _entries_of(verdict: Verdict) -> List[Entry]:
    if verdict.kind == MISMATCH:
        # the odd ones first: they are the likelier culprits
        return [v.entry for v in reversed(verdict.variants)]
    return [verdict.entry] if verdict.entry is not None else []


def check_verdict(
    verdict: Verdict, index: Dict[Key, Tuple[Finding, str]], source_root: str
) -> StaticCheck:
    local_frames: List[Tuple[Frame, str]] = []
    recorded_files = []
    for entry in _entries_of(verdict):
        for frame in entry.frames:
            if not is_python_frame(frame):
                continue
            path = local_path(frame.filename, source_root)
            if path is None:
                if is_user_frame(frame):
                    recorded_files.append(f"{frame.filename}:{frame.line}")
                continue
            if (frame, path) not in local_frames:
                local_frames.append((frame, path))
    for frame, path in local_frames:
        hit = index.get((path, frame.line))
        if hit is not None:
            finding, role = hit
            loc = finding.location
            detail = (
                f"flagged: {loc.path}:{loc.line}:{loc.column}: {finding.code} "
                f"{finding.message} (the recorded line {frame.line} is {role})"
            )
            if verdict.kind == SPLIT:
                # the dumps alone cannot tell behind from ahead with equal sides; a collective
                # that only some ranks reach says which reading is the likelier one
                detail += (
                    f"; so the likelier reading is that {ranks_text(verdict.ahead_ranks)} ran "
                    f"ahead into an extra {verdict.op}"
                )
            return StaticCheck(
                status="flagged",
                detail=detail,
                frame=frame,
                local_path=path,
                finding=finding,
            )
    if local_frames:
        frame, path = local_frames[0]
        shown = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
        callers = len(local_frames) - 1
        detail = (
            f"missed: rankcheck's static analysis did not flag {shown}:{frame.line}"
            + (f" nor the {callers} call site(s) above it in the recorded stack" if callers else "")
            + "; the flight recorder shows this collective diverged, so this is a false negative"
            " of `rankcheck check` worth reporting"
            + _enclosing_guard_text(local_frames, source_root)
        )
        return StaticCheck(status="missed", detail=detail, frame=frame, local_path=path)
    if recorded_files:
        return StaticCheck(
            status="not-found",
            detail=(
                f"the recorded user frame {recorded_files[0]} is not under {source_root} "
                "(looked for the file and for every tail of its path)"
            ),
        )
    if any(entry.frames for entry in _entries_of(verdict)):
        return StaticCheck(
            status="not-found",
            detail=f"the recorded stack has no frame of user code under {source_root}",
        )
    return StaticCheck(status="no-frame", detail="the dumps recorded no stack for this entry")


def cross_reference(analysis: Analysis, source_root: str, findings: Optional[Sequence] = None):
    """Annotate every divergent verdict with what `rankcheck check` says about its line.

    `findings` is for callers that already ran the analysis; by default this runs
    `rankcheck.check_paths([source_root])`, the same API the CLI and the language server use.
    """
    targets = [g.verdict for g in analysis.groups if g.verdict.kind in CROSS_REFERENCED]
    if not targets:
        return analysis
    checks: Dict[Tuple[str, int], StaticCheck] = {}
    if findings is None:
        try:
            import rankcheck

            findings = rankcheck.check_paths([source_root])
        except Exception as exc:
            for verdict in targets:
                checks[(verdict.group, verdict.seq or 0)] = StaticCheck(
                    status="error",
                    detail=f"static analysis could not run: {type(exc).__name__}: {exc}",
                )
            return with_static(analysis, checks)
    index = finding_index(findings)
    for verdict in targets:
        checks[(verdict.group, verdict.seq or 0)] = check_verdict(verdict, index, source_root)
    return with_static(analysis, checks)


def _enclosing_guard_text(frames: List[Tuple[Frame, str]], source_root: str) -> str:
    """Which rank-dependent guard encloses the recorded line (or a call site above it)."""
    from rankcheck.api import enclosing_rank_guards

    for frame, path in frames:
        try:
            guards = enclosing_rank_guards(path, frame.line, root=source_root)
        except Exception:
            return ""
        if guards:
            guard = guards[-1]
            where = f"{guard.location.path}:{guard.location.line}"
            source = f" (from {guard.source.phrase} at line {guard.source.location.line})" if guard.source else ""
            return f"; the line sits under the rank-dependent guard `{guard.text}` at {where}{source}"
    return ""
