"""The run-time guard: arm a job so that a hang is detected in seconds, every rank's evidence is
collected into one bundle, and a verdict names the rank, the collective, the line and the cause.

    rankcheck.runtime.arm(dump_dir="/shared/hangs")     # after init_process_group, every rank
    rankcheck.runtime.step()                            # optional: count a training step
    rankcheck run --dump-dir /shared/hangs -- torchrun ... train.py   # no code change

Importing this package does not import torch; `arm()` does. Modules: `settings` (thresholds),
`progress` (the hot-path bookkeeping), `detect` (the watchdog's decisions), `bundle` (the dump
directory's layout), `evidence` (one rank's evidence), `guard` (arming, torch), `watchdog` (the
thread), `consistency` (check mode), `stacks` (`rankcheck stacks`), `launch` (`rankcheck run`,
`rankcheck dump`), `autoarm` (arming without a code change), `cli`.
"""

from __future__ import annotations

from typing import Any, Optional


def arm(dump_dir: Optional[str] = None, **options: Any) -> Any:
    """Arm this rank (call on every rank, after init_process_group). Options: floor_s, factor,
    interval_s, stale_s, straggler_ratio, evidence_wait_s, check, source (the source root for
    the static cross-reference). Returns the guard; arming twice returns the same one."""
    from rankcheck.runtime.guard import arm as arm_rank

    return arm_rank(dump_dir, **options)


def step() -> None:
    """Count one training step (the guard also counts optimizer steps by itself)."""
    from sys import modules

    guard_module = modules.get("rankcheck.runtime.guard")
    guard = guard_module.current() if guard_module is not None else None
    if guard is not None:
        guard.step()


__all__ = ["arm", "step"]
