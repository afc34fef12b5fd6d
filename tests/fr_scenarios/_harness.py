"""Runs one rank of a flight-recorder scenario on gloo and makes that rank dump its recorder.

Not a test by itself: `tests/test_fr_scenarios.py` starts one process per rank of a scenario
script (`extra_allreduce.py`, ...), which calls `run(train)`. Two ways to get the dumps:

- on-demand (default): each rank calls `settled()` when it reaches its final state (just before
  the collective it will hang in, or when it is done). A background thread waits until every rank
  has settled, gives the last collective half a second to be recorded, then writes
  `torch._C._distributed_c10d._dump_fr_trace()` (pickle) and `_dump_fr_trace_json()` and ends
  the process. Fast: no rank waits for a real timeout.
- on-timeout: the process group gets a short gloo timeout. The rank whose collective times out
  catches the error and writes its pickle dump to `$TORCH_FR_DUMP_TEMP_FILE<rank>`, the path torch
  uses for its own timeout dumps, then asks the other ranks (through a file, as torch's NCCL
  watchdog asks through the store) to dump to the same prefix. Torch 2.13 writes no dump by itself
  on a gloo timeout (checked: TORCH_FR_DUMP_TEMP_FILE set, gloo timeout hit, no file), so this
  stands in for the NCCL watchdog's dump-on-timeout.
"""

from __future__ import annotations

import datetime
import os
import sys
import threading
import time
import traceback

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
OUT = os.environ["FR_SCENARIO_OUT"]
MODE = os.environ.get("FR_SCENARIO_MODE", "on-demand")
CONTROL = os.path.join(OUT, "control")
DEADLINE_S = float(os.environ.get("FR_SCENARIO_DEADLINE_S", "60"))
GRACE_S = 0.5


def _touch(name: str) -> None:
    path = os.path.join(CONTROL, name)
    with open(path + ".tmp", "w") as handle:
        handle.write(str(os.getpid()))
    os.replace(path + ".tmp", path)


def _exists(name: str) -> bool:
    return os.path.exists(os.path.join(CONTROL, name))


def _write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "wb") as handle:
        handle.write(data)
    os.replace(path + ".tmp", path)


def _dump_pickle() -> bytes:
    from torch._C import _distributed_c10d as c10d

    return c10d._dump_fr_trace()


def _dump_json() -> bytes:
    from torch._C import _distributed_c10d as c10d

    data = c10d._dump_fr_trace_json()
    return data if isinstance(data, bytes) else data.encode("utf-8")


def _timeout_dump_path() -> str:
    return os.environ["TORCH_FR_DUMP_TEMP_FILE"] + str(RANK)


def settled() -> None:
    """This rank reached its final state: what is recorded now is what the dump should show."""
    if not _exists(f"settled_{RANK}"):
        _touch(f"settled_{RANK}")


def crash_without_dump() -> None:
    """Die the way a crashed rank does: no flight-recorder dump from this rank."""
    settled()
    _touch(f"crashed_{RANK}")
    sys.stdout.flush()
    os._exit(3)


def _finish() -> None:
    """Exit once every rank has dumped (or crashed).

    Exiting earlier would close this rank's gloo connections, and a peer still waiting in a
    collective with it would see that collective fail, which gloo records as completed: the peer's
    dump, if written after that, would no longer show where it was stuck.
    """
    _touch(f"dumped_{RANK}")
    deadline = time.monotonic() + DEADLINE_S
    while not all(_exists(f"dumped_{r}") or _exists(f"crashed_{r}") for r in range(WORLD)):
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    sys.stdout.flush()
    os._exit(0)


def _on_demand_dumper() -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not all(_exists(f"settled_{r}") for r in range(WORLD)):
        if time.monotonic() > deadline:
            print(f"rank {RANK}: not every rank settled in {DEADLINE_S}s", file=sys.stderr)
            os._exit(4)
        time.sleep(0.05)
    time.sleep(GRACE_S)
    _write(os.path.join(OUT, "pickle", f"fr_trace_rank_{RANK}.pkl"), _dump_pickle())
    _write(os.path.join(OUT, "json", f"fr_trace_rank_{RANK}.json"), _dump_json())
    _finish()


def _timeout_watcher() -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not _exists("dump_request"):
        if time.monotonic() > deadline:
            print(f"rank {RANK}: no rank timed out in {DEADLINE_S}s", file=sys.stderr)
            os._exit(4)
        time.sleep(0.05)
    _write(_timeout_dump_path(), _dump_pickle())
    _finish()


def run(train) -> None:
    import torch.distributed as dist

    os.makedirs(CONTROL, exist_ok=True)
    timeout = float(os.environ.get("FR_GLOO_TIMEOUT_S", "120"))
    # The short timeout is for the collectives only: the rendezvous gets its own, generous one (a
    # rank slow to start on a loaded machine must not fail before the scenario begins).
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world, rank == 0,
                          timeout=datetime.timedelta(seconds=120))
    store.add("harness_started", 1)  # every rank up before the group forms under the short timeout
    deadline = time.monotonic() + 120
    while store.add("harness_started", 0) < world and time.monotonic() < deadline:
        time.sleep(0.01)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=world, timeout=datetime.timedelta(seconds=timeout))
    watcher = _on_demand_dumper if MODE == "on-demand" else _timeout_watcher
    threading.Thread(target=watcher, name="fr-dumper", daemon=True).start()
    try:
        train()
    except RuntimeError as exc:
        if MODE == "on-timeout":
            print(f"rank {RANK}: collective failed ({exc}); dumping", file=sys.stderr, flush=True)
            _write(_timeout_dump_path(), _dump_pickle())
            _touch("dump_request")
            _finish()
        # on-demand: a peer's failure (e.g. a crashed rank) surfaces here; the dumper still runs
        traceback.print_exc()
    settled()
    while True:  # the dumper thread ends the process
        time.sleep(1)
