"""The watchdog's decisions, from heartbeats alone (pure, torch-free, unit-testable).

- hang: no rank has made progress (entered or left a collective, finished a step) for longer
  than the threshold: max(floor, factor x the job's median step time, or the median gap between
  collectives when the job counts no steps);
- gone: a rank's heartbeat stopped (its publisher thread runs while the main thread is blocked,
  so a stale heartbeat means the process is gone or frozen), or it exited while others wait;
- straggler: the job progresses, but one rank computes (step time minus time waiting in
  collectives) `straggler_ratio` times longer than the median of the others.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from rankcheck.runtime.settings import Settings

HANG, STRAGGLER = "hang", "straggler"
MIN_STEPS = 3
MIN_STRAGGLE_S = 0.02  # below this, per-step differences are timer noise


@dataclass(frozen=True)
class Detection:
    kind: str  # HANG | STRAGGLER
    stalled_s: float = 0.0  # time since the last progress of any rank
    typical_s: Optional[float] = None  # the median step (or collective gap) the threshold uses
    typical_what: str = "step"
    threshold_s: float = 0.0
    gone: Tuple[int, ...] = ()  # ranks whose heartbeat stopped or that exited
    slow_rank: Optional[int] = None
    compute_s: Dict[int, float] = field(default_factory=dict)  # rank -> median compute per step

    def as_json(self) -> dict:
        return {
            "kind": self.kind, "stalled_s": round(self.stalled_s, 3),
            "typical_s": self.typical_s, "typical_what": self.typical_what,
            "threshold_s": round(self.threshold_s, 3), "gone": list(self.gone),
            "slow_rank": self.slow_rank,
            "compute_s": {str(r): round(v, 4) for r, v in self.compute_s.items()},
        }


def typical_interval(beats: Dict[int, dict]) -> Tuple[Optional[float], str]:
    steps = [t[0] for b in beats.values() for t in b.get("step_times") or ()]
    if steps:
        return statistics.median(steps), "step"
    gaps = [g for b in beats.values() for g in b.get("gaps") or ()]
    if gaps:
        return statistics.median(gaps), "collective gap"
    return None, "step"


def threshold(settings: Settings, typical: Optional[float]) -> float:
    return max(settings.floor_s, settings.factor * typical) if typical else settings.floor_s


def gone_ranks(beats: Dict[int, dict], now: float, settings: Settings,
               still_running: Optional[Callable[[dict], bool]] = None) -> List[int]:
    """Ranks that exited, or whose heartbeat is stale. `still_running(beat)` (the watchdog knows
    this host's processes) keeps a late heartbeat from a live process: on a loaded machine a
    publisher thread can lag by seconds, and a lagging rank is not a crashed one."""
    gone = []
    for rank, beat in beats.items():
        if beat.get("state") in ("exited", "failed"):
            gone.append(rank)
        elif now - float(beat.get("published", now)) > settings.stale_after:
            if still_running is None or not still_running(beat):
                gone.append(rank)
    return sorted(gone)


def compute_times(beats: Dict[int, dict]) -> Dict[int, float]:
    result = {}
    for rank, beat in beats.items():
        times = beat.get("step_times") or ()
        if len(times) >= MIN_STEPS:
            result[rank] = statistics.median(max(0.0, wall - waiting) for wall, waiting in times)
    return result


def straggler(beats: Dict[int, dict], settings: Settings) -> Optional[Tuple[int, Dict[int, float]]]:
    compute = compute_times(beats)
    if len(compute) < 2 or len(compute) < len(beats):
        return None
    slowest = max(compute, key=lambda r: compute[r])
    others = statistics.median(v for r, v in compute.items() if r != slowest)
    if compute[slowest] - others > MIN_STRAGGLE_S and compute[slowest] > settings.straggler_ratio * others:
        return slowest, compute
    return None


def detect(beats: Dict[int, dict], now: float, settings: Settings, straggler_reported: bool = False,
           still_running: Optional[Callable[[dict], bool]] = None) -> Optional[Detection]:
    if not beats:
        return None
    typical, what = typical_interval(beats)
    limit = threshold(settings, typical)
    gone = gone_ranks(beats, now, settings, still_running)
    alive = [b for r, b in beats.items() if r not in gone]
    last = max((float(b.get("last_progress", 0.0)) for b in alive), default=0.0)
    stalled = now - last if alive else 0.0
    # A rank gone while the others wait in a collective needs no threshold: nothing can move.
    waiting = [b for b in alive if b.get("in_collective")]
    # Before any rank reached its first collective the job is starting up (imports, data, model),
    # not hung; a rank waiting in the first collective for one that never comes is a hang.
    started = any(b.get("collectives") or any(e > 0 for e, _c in (b.get("flight") or {}).values())
                  for b in alive)
    if alive and started and (stalled > limit or (gone and waiting and len(waiting) == len(alive)
                                      and stalled > settings.stale_after)):
        return Detection(HANG, stalled, typical, what, limit, tuple(gone))
    if not straggler_reported and not gone:
        found = straggler(beats, settings)
        if found is not None:
            rank, compute = found
            return Detection(STRAGGLER, stalled, typical, what, limit, slow_rank=rank, compute_s=compute)
    return None
