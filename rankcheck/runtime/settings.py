"""The guard's thresholds: keyword options of `arm()`, or RANKCHECK_* variables under
`rankcheck run` (torch-free)."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Dict, Mapping, Optional

DEFAULT_FR_BUFFER = "2000"


@dataclass(frozen=True)
class Settings:
    # A hang: no rank made progress for max(floor_s, factor x the median step or collective gap).
    floor_s: float = 5.0
    factor: float = 10.0
    # How often each rank publishes its heartbeat and the watchdog looks.
    interval_s: float = 0.5
    # A heartbeat older than this is a rank gone (default: max(4 intervals, 2 s)).
    stale_s: float = 0.0
    # A straggler: a rank whose compute per step is this many times the others' median.
    straggler_ratio: float = 3.0
    # How long the detecting rank waits for the other ranks' evidence before the verdict.
    evidence_wait_s: float = 3.0
    # Consistency mode: cross-check every collective's fingerprint between ranks first.
    check: bool = False

    @property
    def stale_after(self) -> float:
        return self.stale_s or max(4 * self.interval_s, 2.0)

    def validated(self) -> Settings:
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name != "check" and (not isinstance(value, (int, float)) or value < 0):
                raise ValueError(f"rankcheck.runtime: {item.name} must be a number >= 0, not {value!r}")
        if self.interval_s <= 0:
            raise ValueError("rankcheck.runtime: interval_s must be > 0")
        return self


ENV_PREFIX = "RANKCHECK_"


def env_names() -> Dict[str, str]:
    """option -> its environment variable (RANKCHECK_FLOOR_S, ...)."""
    return {f.name: ENV_PREFIX + f.name.upper() for f in fields(Settings)}


def from_env(environ: Optional[Mapping[str, str]] = None, **overrides: object) -> Settings:
    env = os.environ if environ is None else environ
    values: Dict[str, object] = {}
    for name, variable in env_names().items():
        raw = env.get(variable)
        if raw is None or raw == "":
            continue
        try:
            values[name] = raw.lower() in ("1", "true", "yes") if name == "check" else float(raw)
        except ValueError as exc:
            raise ValueError(f"{variable}={raw!r}: not a number") from exc
    values.update({k: v for k, v in overrides.items() if v is not None})
    unknown = set(values) - set(env_names())
    if unknown:
        raise TypeError(f"rankcheck.runtime.arm: unknown option(s) {', '.join(sorted(unknown))}")
    return replace(Settings(), **values).validated()  # type: ignore[arg-type]
