"""The dynamic verifier: replay code on real gloo ranks and watch the collectives diverge.

    run_script(path, args, nproc, timeout) -> RunResult      # the core: one replay of a script
    run_function(path, function, ...) -> RunResult           # one function called on every rank
    verify_findings(findings, nproc=2, timeout=60.0, root=None) -> list[Finding]

It executes user code, so it only ever runs when asked. Importing this package does not import
torch (only the rank processes do).
"""

from __future__ import annotations

from rankcheck.verify.api import run_function, run_script, verify_findings
from rankcheck.verify.vtypes import CollectiveCall, Divergence, RankOutcome, RunResult

__all__ = [
    "CollectiveCall",
    "Divergence",
    "RankOutcome",
    "RunResult",
    "run_function",
    "run_script",
    "verify_findings",
]
