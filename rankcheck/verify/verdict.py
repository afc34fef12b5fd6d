"""From what a replay observed to a verdict on each static finding.

A finding is `confirmed` when the observed divergence is the one it predicted:
- the divergent collective's user stack (any frame, any rank held at it) passes through the
  finding's line, its guard's line, or a line of its chain in the same file; or
- the finding's line is an exit (`return`/`continue`/`break`/`raise`/`sys.exit()`) that ran more
  often on a rank that never arrived than on a rank that did; or
- the finding's line is a call whose collectives ran a different number of times on different
  ranks, and without them every rank's collective sequence agrees (it is the whole difference).
Otherwise `error` (user code raised), `not-reached` (the line never ran on any rank),
`not-reproduced` (it ran and nothing it did diverged), or `unsupported` (needs a GPU; not
replayable). A divergence no finding explains is returned as an extra finding, `unpredicted`.
"""

from __future__ import annotations

import ast
import functools
import os
from dataclasses import replace
from typing import Callable, Iterable, Optional

from rankcheck.ftypes import ERROR, Finding, Location
from rankcheck.verify.vtypes import (
    DIED,
    EXITED,
    FINISHED,
    RAISED,
    CollectiveCall,
    Divergence,
    RankOutcome,
    RunResult,
    short_path,
)

CONFIRMED = "confirmed"
NOT_REPRODUCED = "not-reproduced"
NOT_REACHED = "not-reached"
ERROR_VERDICT = "error"
UNSUPPORTED = "unsupported"
UNPREDICTED = "unpredicted"

_COMPLETE = (FINISHED, EXITED, RAISED, DIED)
_EXIT_CALLS = {"sys.exit", "exit", "quit", "os._exit", "os.abort"}


def real(path: str, root: Optional[str] = None) -> str:
    if not os.path.isabs(path) and root and not os.path.exists(path):
        path = os.path.join(root, path)
    return os.path.realpath(path)


def finding_lines(finding: Finding, root: Optional[str] = None) -> set[tuple[str, int]]:
    """The finding's line, its guard's line, and its chain's lines in the same file."""
    path = real(finding.location.path, root)
    lines = {(path, finding.location.line)}
    if finding.guard is not None:
        lines.add((real(finding.guard.location.path, root), finding.guard.location.line))
    for step in finding.chain:
        if real(step.location.path, root) == path:
            lines.add((path, step.location.line))
    return lines


def watch_lines(findings: Iterable[Finding], root: Optional[str] = None) -> dict[str, list[int]]:
    watch: dict[str, set[int]] = {}
    for finding in findings:
        for path, line in finding_lines(finding, root):
            watch.setdefault(path, set()).add(line)
    return {path: sorted(lines) for path, lines in watch.items()}


@functools.lru_cache(maxsize=256)
def _module(path: str, mtime: float) -> Optional[ast.Module]:
    try:
        with open(path, encoding="utf-8") as handle:
            return ast.parse(handle.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None


def parse(path: str) -> Optional[ast.Module]:
    try:
        return _module(path, os.path.getmtime(path))
    except OSError:
        return None


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def is_exit_line(path: str, line: int) -> bool:
    """Is the statement starting on this line a return/continue/break/raise/exit call?"""
    tree = parse(path)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) != line or not isinstance(node, ast.stmt):
            continue
        if isinstance(node, (ast.Return, ast.Continue, ast.Break, ast.Raise)):
            return True
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            if _dotted(node.value.func) in _EXIT_CALLS:
                return True
        if isinstance(node, ast.If):  # a one-line `if rank != 0: return`
            if any(
                isinstance(s, (ast.Return, ast.Continue, ast.Break, ast.Raise)) for s in node.body
            ):
                if all(getattr(s, "lineno", 0) == line for s in node.body):
                    return True
    return False


# ---- the three ways a divergence is the predicted one ----------------------------------------
def _through(call: CollectiveCall, lines: set[tuple[str, int]]) -> bool:
    return any((os.path.realpath(f.path), f.line) in lines for f in call.stack)


def _stack_match(result: RunResult, lines: set[tuple[str, int]]) -> bool:
    divergence = result.divergence
    if divergence is None:
        return False
    held = list(divergence.entered) + [a.blocked for a in divergence.absent if a.blocked]
    return any(_through(call, lines) for call in held)


def _hits(outcome: RankOutcome, path: str, line: int) -> int:
    return outcome.hits(path, line)


def _exit_match(result: RunResult, path: str, line: int) -> bool:
    divergence = result.divergence
    if divergence is None or not is_exit_line(path, line):
        return False
    by_rank = {o.rank: o for o in result.ranks}
    entered = [by_rank[r] for r in divergence.ranks_entered if r in by_rank]
    if divergence.kind == "mismatch":
        # the ranks met at different collectives: the exit is why when it ran unevenly among them
        return len({_hits(o, path, line) for o in entered}) > 1
    absent = [by_rank[a.rank] for a in divergence.absent if a.rank in by_rank]
    if not entered or not absent:
        return False
    least_entered = min(_hits(o, path, line) for o in entered)
    return any(_hits(o, path, line) > least_entered for o in absent)


def _consistent(result: RunResult, skip: Callable[[CollectiveCall], bool]) -> bool:
    """Would every group's collective sequences agree across ranks without the skipped calls?"""
    sequences: dict[str, dict[int, list[str]]] = {}
    complete = {o.rank: o.state in _COMPLETE for o in result.ranks}
    for outcome in result.ranks:
        for call in outcome.calls:
            if not skip(call):
                group = sequences.setdefault(call.group_key, {})
                group.setdefault(outcome.rank, []).append(call.signature)
        if outcome.blocked is not None and outcome.blocked not in outcome.calls:
            if not skip(outcome.blocked):
                group = sequences.setdefault(outcome.blocked.group_key, {})
                group.setdefault(outcome.rank, []).append(outcome.blocked.signature)
    members_of: dict[str, tuple[int, ...]] = {}
    for outcome in result.ranks:
        for call in outcome.calls:
            members_of.setdefault(call.group_key, call.members)
    for key, by_rank in sequences.items():
        members = [m for m in members_of.get(key, tuple(by_rank)) if m in complete]
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                sa, sb = by_rank.get(a, []), by_rank.get(b, [])
                if complete[a] and complete[b]:
                    if sa != sb:
                        return False
                elif complete[a]:
                    if sb != sa[: len(sb)]:
                        return False
                elif complete[b]:
                    if sa != sb[: len(sa)]:
                        return False
                else:
                    shorter = min(len(sa), len(sb))
                    if sa[:shorter] != sb[:shorter]:
                        return False
    return True


def _extra_calls_match(result: RunResult, lines: set[tuple[str, int]]) -> bool:
    counts = {o.rank: sum(1 for c in o.calls if _through(c, lines)) for o in result.ranks}
    if len(set(counts.values())) < 2:
        return False
    return _consistent(result, lambda call: _through(call, lines))


def explains(finding: Finding, result: RunResult, root: Optional[str] = None) -> bool:
    if result.divergence is None:
        return False
    lines = finding_lines(finding, root)
    path = real(finding.location.path, root)
    line = finding.location.line
    if _stack_match(result, lines) or _exit_match(result, path, line):
        return True
    if is_exit_line(path, line):
        return False
    return _extra_calls_match(result, {(path, line)})


# ---- verdicts ---------------------------------------------------------------------------------
def _ran_on(result: RunResult, path: str, line: int) -> list[tuple[int, int]]:
    return [(o.rank, o.hits(path, line)) for o in result.ranks if o.hits(path, line)]


def _exited_badly(outcome: RankOutcome) -> bool:
    return outcome.state == EXITED and outcome.exit_code not in (0, None)


def _failed(result: RunResult) -> bool:
    return any(o.error is not None or o.state == DIED or _exited_badly(o) for o in result.ranks)


def _errors_text(result: RunResult) -> str:
    parts = []
    for outcome in result.ranks:
        if outcome.error is not None:
            parts.append(f"rank {outcome.rank}: {outcome.error.text}")
        elif outcome.state == DIED or _exited_badly(outcome):
            tail = [line for line in outcome.output.strip().splitlines() if line.strip()][-3:]
            said = ("; its last output: " + " | ".join(tail)) if tail else ""
            parts.append(f"rank {outcome.rank} {outcome.ending()}{said}")
    return "\n".join(parts)


def _timeout_text(result: RunResult) -> str:
    parts = [f"no verdict within the {result.timeout:g} s limit"]
    for outcome in result.ranks:
        if outcome.stack:
            where = outcome.stack[0]
            inside = " (inside torch)" if outcome.stack_in_torch else ""
            parts.append(f"rank {outcome.rank} was at {where} in {where.function}(){inside}")
        else:
            parts.append(f"rank {outcome.rank} {outcome.ending()}")
    return "; ".join(parts)


def judge(finding: Finding, result: RunResult, root: Optional[str] = None) -> Finding:
    """The finding with `verdict` and `verdict_detail` set from one replay of its code."""
    path = real(finding.location.path, root)
    line = finding.location.line
    if result.unsupported:
        return replace(finding, verdict=UNSUPPORTED, verdict_detail=result.unsupported)
    if result.outcome == "torch-missing":
        return replace(
            finding,
            verdict=UNSUPPORTED,
            verdict_detail="torch is not installed: pip install torch --index-url https://download.pytorch.org/whl/cpu",
        )
    if explains(finding, result, root) and result.divergence is not None:
        return replace(finding, verdict=CONFIRMED, verdict_detail=result.divergence.summary)
    ran = _ran_on(result, path, line)
    if result.timed_out and result.hang_evidence() and len(ran) < result.nproc:
        return replace(
            finding,
            verdict=CONFIRMED,
            verdict_detail="hang (seen at the time limit, in a collective rankcheck does not "
            "instrument): " + _timeout_text(result),
        )
    if _failed(result):
        return replace(finding, verdict=ERROR_VERDICT, verdict_detail=_errors_text(result))
    if result.timed_out:
        return replace(finding, verdict=ERROR_VERDICT, verdict_detail=_timeout_text(result))
    if not ran:
        detail = f"line {line} never ran on any rank"
        if result.divergence is not None:
            detail += f"; the replay stopped at a divergence first: {result.divergence.summary}"
        return replace(finding, verdict=NOT_REACHED, verdict_detail=detail)
    ran_text = ", ".join(f"rank {rank} ({count}x)" for rank, count in ran)
    detail = f"line {line} ran on {ran_text}"
    if result.divergence is None:
        calls = max((o.collectives for o in result.ranks), default=0)
        detail += f"; every rank issued the same {calls} collectives"
    else:
        detail += f"; the divergence observed is elsewhere: {result.divergence.summary}"
    return replace(finding, verdict=NOT_REPRODUCED, verdict_detail=detail)


def unpredicted_code(divergence: Divergence) -> str:
    """The rule an observed divergence is an instance of: ranks at one position of a group with
    other arguments (RC104) or other collectives (RC106), in a cycle of waits (RC106), or some
    ranks never arriving (RC101)."""
    if divergence.kind == "mismatch":
        return "RC104" if len({call.op for call in divergence.entered}) == 1 else "RC106"
    if divergence.kind == "deadlock":
        return "RC106"
    return "RC101"


def call_column(path: str, line: int, op: str) -> int:
    """The 1-based column of the call of `op` (`dist.all_reduce(...)`) on `line` of `path`; the
    line's first non-blank column when no such call is found (the stack holds lines only)."""
    tree = parse(path)
    if tree is not None:
        starts = [
            node for node in ast.walk(tree)
            if isinstance(node, ast.Call) and node.lineno == line and _dotted(node.func).split(".")[-1] == op
        ]
        if starts:
            node = min(starts, key=lambda n: n.col_offset)
            try:  # ast's offsets count UTF-8 bytes, columns count characters
                with open(path, "rb") as handle:
                    raw = handle.read().splitlines()[line - 1]
                return len(raw[: node.col_offset].decode("utf-8", "replace")) + 1
            except (OSError, IndexError):
                return node.col_offset + 1
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read().splitlines()[line - 1]
        return len(text) - len(text.lstrip()) + 1
    except (OSError, IndexError):
        return 1


def unpredicted(result: RunResult, judged: Iterable[Finding]) -> Optional[Finding]:
    """The observed divergence as a finding of its own, when no finding explains it: the rule it
    is an instance of, at the divergent call. Its message says that much; what the ranks did is
    its `verdict_detail` (the divergence's sentence, which the report's headline already prints)."""
    from rankcheck.rules_meta import get_rule

    divergence = result.divergence
    if divergence is None or any(f.verdict == CONFIRMED for f in judged):
        return None
    call = divergence.entered[0] if divergence.entered else None
    site = call.site if call is not None else None
    if site is not None and call is not None:
        location = Location(short_path(site.path), site.line, call_column(site.path, site.line, call.op))
    else:
        location = Location(short_path(result.target.split("::")[0]), 1, 1)
    code = unpredicted_code(divergence)
    return Finding(
        code=code,
        message=f"{get_rule(code).phrase}: observed on {result.nproc} gloo ranks and predicted by no static finding",
        location=location,
        severity=ERROR,
        collective=call.op if call is not None else "",
        verdict=UNPREDICTED,
        verdict_detail=divergence.summary,
        extra=(("source", "rankcheck verify"), ("divergence", divergence.kind)),
    )


# ---- replaying findings -----------------------------------------------------------------------
def is_script(path: str) -> bool:
    """A file that does something when run: a `__main__` block or top-level code."""
    tree = parse(path)
    if tree is None:
        return False
    for node in tree.body:
        if isinstance(node, ast.If):
            test = node.test
            if (
                isinstance(test, ast.Compare)
                and isinstance(test.left, ast.Name)
                and test.left.id == "__name__"
            ):
                return True
        if isinstance(node, (ast.For, ast.While, ast.With, ast.AsyncWith)):
            return True
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            return True
    return False


def replayable_function(path: str, line: int) -> tuple[str, str]:
    """(name, "") of the top-level function around `line` when it can be called without
    arguments, else ("", why not)."""
    tree = parse(path)
    if tree is None:
        return "", f"{short_path(path)} could not be parsed"
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            end = getattr(node, "end_lineno", node.lineno) or node.lineno
            if node.lineno <= line <= end:
                if isinstance(node, ast.AsyncFunctionDef):
                    return "", f"{node.name}() is async"
                args = node.args
                required = len(args.posonlyargs) + len(args.args) - len(args.defaults)
                required += sum(1 for d in args.kw_defaults if d is None)
                if required:
                    return "", (
                        f"{short_path(path)} is not a script and {node.name}() takes arguments: "
                        f"replay it with `rankcheck verify {short_path(path)}::{node.name} "
                        "--fixture module:func`"
                    )
                return node.name, ""
    return "", f"{short_path(path)} is not a script and line {line} is not in a top-level function"


def verify_all(
    findings: list[Finding],
    *,
    nproc: int = 2,
    timeout: float = 60.0,
    root: Optional[str] = None,
    announce: Optional[Callable[[str], None]] = None,
) -> list[Finding]:
    from rankcheck.verify.api import run_function, run_script

    cwd = os.path.abspath(root) if root else os.getcwd()
    judged: list[Optional[Finding]] = [None] * len(findings)
    targets: dict[tuple[str, str], list[int]] = {}
    for index, finding in enumerate(findings):
        path = real(finding.location.path, root)
        if not os.path.isfile(path):
            judged[index] = replace(
                finding, verdict=UNSUPPORTED, verdict_detail=f"not replayable: {path} not found"
            )
        elif is_script(path):
            targets.setdefault((path, ""), []).append(index)
        else:
            function, why = replayable_function(path, finding.location.line)
            if function:
                targets.setdefault((path, function), []).append(index)
            else:
                judged[index] = replace(
                    finding, verdict=UNSUPPORTED, verdict_detail=f"not replayable: {why}"
                )
    extras: list[Finding] = []
    for (path, function), indexes in targets.items():
        group = [findings[i] for i in indexes]
        watch = watch_lines(group, root)
        if function:
            result = run_function(
                path,
                function,
                nproc=nproc,
                timeout=timeout,
                watch=watch,
                cwd=cwd,
                announce=announce,
            )
        else:
            result = run_script(
                path, (), nproc=nproc, timeout=timeout, watch=watch, cwd=cwd, announce=announce
            )
        verdicts = [judge(findings[i], result, root) for i in indexes]
        for i, verdict in zip(indexes, verdicts):
            judged[i] = verdict
        extra = unpredicted(result, verdicts)
        if extra is not None:
            extras.append(extra)
    return [f for f in judged if f is not None] + extras
