"""The verifier's library surface; the CLI and `rankcheck check --verify` call these."""

from __future__ import annotations

import os
import sys
from typing import Callable, Iterable, Optional, Sequence

from rankcheck.ftypes import Finding
from rankcheck.verify.launcher import LaunchSpec, replay
from rankcheck.verify.vtypes import RunResult

Announce = Optional[Callable[[str], None]]


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run_script(
    path: str,
    args: Sequence[str] = (),
    nproc: int = 2,
    timeout: float = 60.0,
    *,
    watch: Optional[dict] = None,
    cwd: Optional[str] = None,
    announce: Announce = _stderr,
    env: Iterable[tuple] = (),
) -> RunResult:
    """Run `python path args...` on `nproc` gloo ranks and report what the collectives did.

    `watch` ({path: [lines]}) names source lines whose execution each rank should count (the
    lines of the findings being verified).
    """
    spec = LaunchSpec(
        mode="script",
        path=os.path.abspath(path),
        args=tuple(args),
        nproc=nproc,
        timeout=timeout,
        cwd=cwd or os.getcwd(),
        watch=_absolute(watch),
        env=tuple(env),
    )
    return replay(spec, announce)


def run_function(
    path: str,
    function: str,
    *,
    fixture: str = "",
    nproc: int = 2,
    timeout: float = 60.0,
    watch: Optional[dict] = None,
    cwd: Optional[str] = None,
    announce: Announce = _stderr,
    env: Iterable[tuple] = (),
) -> RunResult:
    """Call `function` of the module at `path` on every rank (inside a gloo process group the
    verifier opens unless the function does), with arguments from `fixture` ("module:func")."""
    spec = LaunchSpec(
        mode="function",
        path=os.path.abspath(path),
        function=function,
        fixture=fixture,
        nproc=nproc,
        timeout=timeout,
        cwd=cwd or os.getcwd(),
        watch=_absolute(watch),
        env=tuple(env),
    )
    return replay(spec, announce)


def run_plain(
    path: str,
    args: Sequence[str] = (),
    nproc: int = 2,
    timeout: float = 60.0,
    pg_timeout: Optional[float] = None,
    cwd: Optional[str] = None,
) -> RunResult:
    """The uninstrumented baseline: the same ranks, torchrun-style, no checkpoints (benchmark)."""
    spec = LaunchSpec(
        mode="plain",
        path=os.path.abspath(path),
        args=tuple(args),
        nproc=nproc,
        timeout=timeout,
        cwd=cwd or os.getcwd(),
        pg_timeout=pg_timeout,
    )
    return replay(spec, None)


def verify_findings(
    findings: list[Finding],
    *,
    nproc: int = 2,
    timeout: float = 60.0,
    root: Optional[str] = None,
    announce: Announce = _stderr,
) -> list[Finding]:
    """Replay the code of each finding and return the findings with `verdict` set, followed by
    any divergence no finding predicted (verdict "unpredicted")."""
    from rankcheck.verify.verdict import verify_all

    return verify_all(findings, nproc=nproc, timeout=timeout, root=root, announce=announce)


def _absolute(watch: Optional[dict]) -> dict:
    out: dict[str, list[int]] = {}
    for path, lines in (watch or {}).items():
        out.setdefault(os.path.realpath(path), [])
        out[os.path.realpath(path)].extend(int(n) for n in lines)
    return out
