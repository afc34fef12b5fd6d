"""`arm()`: the run-time guard inside one rank (imports torch; only ever loaded lazily).

After `init_process_group`, arming turns on what makes a hang diagnosable (the flight recorder,
asynchronous error handling for NCCL, a gloo side group for `monitored_barrier`), says once on
rank 0 when the group runs with torch's default timeout, wraps the collectives of
torch.distributed with the verifier's shared instrumentation (here: cheap progress bookkeeping,
and in consistency mode a fingerprint cross-check) and starts the watchdog thread.
"""

from __future__ import annotations

import atexit
import datetime
import json
import os
import socket
import sys
import threading
import traceback
from typing import Any, Callable, Dict, List, Optional

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d

from rankcheck.runtime import bundle as layout
from rankcheck.runtime.progress import Progress
from rankcheck.runtime.settings import DEFAULT_FR_BUFFER, Settings
from rankcheck.verify.instrument import Instrumentation, install_collectives

DEFAULT_TIMEOUTS = (c10d.default_pg_timeout, getattr(c10d, "default_pg_nccl_timeout", None))


def group_timeout(group: Any) -> Optional[datetime.timedelta]:
    """The timeout the group's backends run with, when torch tells."""
    for device in ("cpu", "cuda"):
        try:
            backend = group._get_backend(torch.device(device))
            return backend.options._timeout
        except Exception:  # no backend for that device, or no options on it
            continue
    return None


class Guard(Instrumentation):
    """This rank's armed state: the bookkeeping the wrappers feed and the watchdog reads."""

    def __init__(self, dump_dir: str, settings: Settings, source_root: str) -> None:
        super().__init__(dist.get_rank(), dist.get_world_size())
        self.wants_arguments = settings.check
        self.dump_dir = os.path.abspath(dump_dir)
        self.settings = settings
        self.source_root = source_root
        self.job = layout.job_id()
        self.progress = Progress(self.rank)
        self.state = "running"
        self.error = ""
        self.notes: List[str] = []
        self.backend = str(dist.get_backend())
        self.timeout = group_timeout(c10d._get_default_group())
        self.side_group: Any = None
        self.consistency: Any = None
        self.uninstall: Callable[[], None] = lambda: None
        self.watchdog: Any = None
        self.last_flight: Dict[str, List[int]] = {}

    # ---- the wrappers' calls (the hot path) ---------------------------------------------------
    def checkpoint(self, op: str, key: str, name: str, members: tuple, args: str,
                   numbered: bool = True) -> None:
        if self.consistency is not None:
            message = self.enter_message(op, key, name, members, args, numbered)
            self.progress.entered(key, name, op, message["group_seq"], sys._getframe(1))
            self.consistency.exchange(message)
            return
        seq = self.group_counts.get(key, 0) + 1
        self.group_counts[key] = seq
        self.progress.entered(key, name, op, seq, sys._getframe(1))

    def returned(self) -> None:
        self.progress.returned()

    def step(self) -> None:
        self.progress.step()

    # ---- what the watchdog publishes ------------------------------------------------------------
    def heartbeat(self, now: float) -> dict:
        # What the flight recorder counted since the last heartbeat is progress too: DDP's
        # gradient buckets and collectives bound before arming never pass the wrappers.
        flight = flight_status()
        if flight and flight != self.last_flight:
            self.progress.last_progress = max(self.progress.last_progress, now)
            self.last_flight = flight
        beat = self.progress.snapshot()
        beat["flight"] = flight
        beat.update(published=now, pid=os.getpid(), host=socket.gethostname(), state=self.state,
                    error=self.error, job=self.job, world_size=self.world_size,
                    launcher=os.environ.get("RANKCHECK_LAUNCHER", ""))
        return beat

    def environment(self) -> dict:
        keys = sorted(k for k in os.environ if k.startswith(("TORCH_", "NCCL_", "GLOO_", "RANKCHECK_"))
                      or k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                               "MASTER_PORT", "GROUP_RANK", "TORCHELASTIC_RUN_ID"))
        return {
            "rank": self.rank, "world_size": self.world_size, "backend": self.backend,
            "timeout_s": self.timeout.total_seconds() if self.timeout else None,
            "default_timeout": self.timeout in DEFAULT_TIMEOUTS,
            "torch": torch.__version__, "python": sys.version.split()[0],
            "host": socket.gethostname(), "pid": os.getpid(), "argv": sys.argv,
            "source_root": self.source_root, "settings": self.settings.__dict__,
            "env": {k: os.environ[k] for k in keys}, "guard_notes": self.notes,
        }


def flight_status() -> Dict[str, List[int]]:
    """process group -> [last enqueued, last completed] as the flight recorder counts them: its
    status only (well under a millisecond, unlike a dump of the entries)."""
    try:
        from torch._C import _distributed_c10d as c10d_ext

        raw = c10d_ext._dump_fr_trace_json(False, False)  # type: ignore[attr-defined]  # not in the stubs
        status = json.loads(raw).get("pg_status") or {}
        return {str(group): [int(s.get("last_enqueued_collective", -1)), int(s.get("last_completed_collective", -1))]
                for group, s in status.items()}
    except Exception:  # the recorder off, or a torch without it
        return {}


_guard: Optional[Guard] = None
_lock = threading.Lock()


def current() -> Optional[Guard]:
    return _guard


def _flight_recorder_settings(backend: str, notes: List[str]) -> None:
    # Gloo reads the buffer size when it records its first collective; NCCL when the group is
    # made, so for NCCL these take effect on groups created from now on (`rankcheck run` sets
    # them before the job starts).
    late = "nccl" in backend
    for name, value in (("TORCH_FR_BUFFER_SIZE", DEFAULT_FR_BUFFER),
                        ("TORCH_NCCL_ASYNC_ERROR_HANDLING", "3"),
                        ("TORCH_NCCL_DUMP_ON_TIMEOUT", "1")):
        if os.environ.get(name, "") in ("", "0"):
            os.environ[name] = value
            if late:
                notes.append(f"{name} set after init_process_group: effective for new groups "
                             "only; set it before (or use `rankcheck run`)")


def _default_timeout_note(guard: Guard) -> None:
    if guard.rank == 0 and guard.timeout in DEFAULT_TIMEOUTS:
        print(f"rankcheck: the default process group runs with torch's default timeout "
              f"({guard.timeout}): a hang that the guard does not catch waits that long. Pass "
              "init_process_group(timeout=...) a few times your longest legitimate collective.",
              file=sys.stderr, flush=True)


def _hook_optimizer_steps(guard: Guard) -> None:
    try:
        from torch.optim.optimizer import register_optimizer_step_post_hook
    except ImportError:
        return
    register_optimizer_step_post_hook(lambda optimizer, args, kwargs: guard.step())


def _record_exit(guard: Guard) -> None:
    previous = sys.excepthook

    def excepthook(kind, value, tb):
        guard.state = "failed"
        guard.error = "".join(traceback.format_exception_only(kind, value)).strip()
        if guard.watchdog is not None:
            guard.watchdog.publish()
        previous(kind, value, tb)

    sys.excepthook = excepthook

    def at_exit() -> None:
        if guard.state == "running":
            guard.state = "exited"
        if guard.watchdog is not None:
            guard.watchdog.stop()
            guard.watchdog.publish()

    atexit.register(at_exit)


def arm(dump_dir: Optional[str] = None, *, source: Optional[str] = None, **options: Any) -> Guard:
    from rankcheck.runtime.consistency import Consistency
    from rankcheck.runtime.settings import from_env
    from rankcheck.runtime.watchdog import Watchdog

    global _guard
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError("rankcheck.runtime.arm() needs an initialised process group: "
                           "call it after torch.distributed.init_process_group()")
    with _lock:
        if _guard is not None:
            return _guard
        settings = from_env(**options)
        folder = dump_dir or os.environ.get("RANKCHECK_DUMP_DIR") or "rankcheck-hangs"
        main = sys.modules.get("__main__")
        script = getattr(main, "__file__", None) or (sys.argv[0] if sys.argv else "")
        root = source or os.environ.get("RANKCHECK_SOURCE") or (
            os.path.dirname(os.path.abspath(script)) if script else os.getcwd())
        guard = Guard(folder, settings, root)
        _flight_recorder_settings(guard.backend, guard.notes)
        if "nccl" in guard.backend:
            # monitored_barrier needs gloo; every rank arms, so every rank makes it. The group
            # only diagnoses, so it waits a minute, not gloo's 30-minute default: a
            # monitored_barrier() without timeout= names the missing ranks that soon.
            guard.side_group = dist.new_group(backend="gloo", timeout=datetime.timedelta(seconds=SIDE_GROUP_TIMEOUT_S))
        if settings.check:
            guard.consistency = Consistency(c10d._get_default_store(), guard.rank, guard.world_size)
        _default_timeout_note(guard)
        guard.uninstall = install_collectives(guard)
        _hook_optimizer_steps(guard)
        _record_exit(guard)
        guard.watchdog = Watchdog(guard)
        guard.watchdog.start()
        _guard = guard
        return guard


# How long a monitored_barrier on the gloo side group waits for the missing ranks by default.
SIDE_GROUP_TIMEOUT_S = 60


def monitored_barrier(timeout: Optional[datetime.timedelta] = None) -> None:
    """`monitored_barrier` on the gloo side group (NCCL jobs) or the default group (gloo)."""
    guard = _guard
    group = guard.side_group if guard is not None else None
    dist.monitored_barrier(group=group, timeout=timeout, wait_all_ranks=True)
