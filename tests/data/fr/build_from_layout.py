"""Write the BUILT-FROM-LAYOUT dumps under `built-from-layout/`: NOT recorded by torch.

Only torch 2.13 can be installed here, so dumps of the layouts torch 2.4-2.9 wrote (dump versions
2.2-2.9) are built by this script from the layout documented in `rankcheck/fr/layouts.py` (read in
PyTorch's `NCCLUtils.hpp`/`FlightRecorder.hpp` history): same keys, same value shapes (tuples vs
lists, None vs 0 for unknown times, int vs string counters in JSON), NCCL profiling names and
states. Rerun it after changing the layout table: `python tests/data/fr/build_from_layout.py`.

Every version holds the same 3-rank NCCL story, so one test can check them all:
a send/recv pair (p2p, not a collective), #1 all_reduce and #2 all_reduce complete everywhere, then
ranks 0 and 2 enter #3 broadcast at /workspace/train.py:42 and rank 1 never does (its last
collective is #2 at line 37): rank 1 is behind.
"""

from __future__ import annotations

import json
import os
import pickle

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "built-from-layout")
WORLD = 3
BASE_NS = 1_700_000_000_000_000_000

VERSIONS = ("2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9")


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def _frames(line: int, function: str):
    return [
        {"name": function, "filename": "/opt/conda/lib/python3.10/site-packages/torch/"
                                      "distributed/distributed_c10d.py", "line": 2280},
        {"name": "wrapper", "filename": "/opt/conda/lib/python3.10/site-packages/torch/"
                                        "distributed/c10d_logger.py", "line": 79},
        {"name": "train_step", "filename": "/workspace/train.py", "line": line},
        {"name": "main", "filename": "/workspace/train.py", "line": 60},
        {"name": "<module>", "filename": "/workspace/train.py", "line": 64},
    ]


def _ops(rank: int):
    """(profiling name, collective seq, p2p seq, sizes, state, line, function) of one rank."""
    ops = []
    if rank in (0, 1):
        name = "nccl:send 0->1" if rank == 0 else "nccl:recv 1<-0"
        ops.append((name, 0, 1, [[16]], "completed", 30, "send" if rank == 0 else "recv"))
    ops.append(("nccl:all_reduce", 1, 0, [[1024]], "completed", 35, "all_reduce"))
    ops.append(("nccl:all_reduce", 2, 0, [[1024]], "completed", 37, "all_reduce"))
    if rank != 1:
        ops.append(("nccl:broadcast", 3, 0, [[256, 256]], "started", 42, "broadcast"))
    return ops


def _entry(version: str, rank: int, index: int, op, fmt: str):
    name, seq, p2p_seq, sizes, state, line, function = op
    created = BASE_NS + index * 1_000_000
    started = created + 10_000 if state in ("started", "completed") else None
    completed = created + 50_000 if state == "completed" else None
    unknown = None if fmt == "pickle" else 0
    entry = {
        "record_id": index,
        "pg_id": 0,
        "process_group": ("0", "default_pg") if fmt == "pickle" else ["0", "default_pg"],
        "collective_seq_id": seq,
        "p2p_seq_id": p2p_seq,
        "op_id": index + 1,
        "profiling_name": name,
        "time_created_ns": created,
        "input_sizes": sizes,
        "input_dtypes": ["Float"],
        "output_sizes": sizes,
        "output_dtypes": ["Float"],
        "state": state,
        "time_discovered_started_ns": started if started is not None else unknown,
        "time_discovered_completed_ns": completed if completed is not None else unknown,
        "retired": state == "completed",
        "timeout_ms": 600000,
        "is_p2p": name.startswith(("nccl:send", "nccl:recv")),
    }
    if state == "completed":
        entry["duration_ms"] = 0.25
    if _minor(version) >= 8:
        entry["thread_id"] = "140012345678912"
        entry["thread_name"] = "pt_main_thread"
    if fmt == "pickle":
        entry["frames"] = _frames(line, function)
    return entry


def _dump(version: str, rank: int, fmt: str) -> dict:
    ops = _ops(rank)
    entries = [_entry(version, rank, i, op, fmt) for i, op in enumerate(ops)]
    dump = {
        "version": version,
        "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2]"}},
        "entries": entries,
    }
    if _minor(version) >= 3:
        last = max(op[1] for op in ops)
        done = max(op[1] for op in ops if op[4] == "completed")
        counters = {
            "last_enqueued_collective": last,
            "last_started_collective": last,
            "last_completed_collective": done,
        }
        if fmt == "json":
            counters = {k: str(v) for k, v in counters.items()}
        dump["pg_status"] = {"0": counters}
    if 6 <= _minor(version) <= 8:
        dump["nccl_version"] = "2.21.5"
    if _minor(version) == 9:
        dump["comm_lib_version"] = "2.26.2"
    return dump


def main() -> None:
    for version in VERSIONS:
        formats = ("pickle",) if version == "2.2" else ("pickle", "json")
        for fmt in formats:
            folder = os.path.join(OUT, f"v{version}", fmt)
            os.makedirs(folder, exist_ok=True)
            for rank in range(WORLD):
                dump = _dump(version, rank, fmt)
                if fmt == "pickle":
                    # torch's own pickler writes protocol 2 with plain containers only
                    data = pickle.dumps(dump, protocol=2)
                    path = os.path.join(folder, f"nccl_trace_rank_{rank}")
                else:
                    data = json.dumps(dump).encode("utf-8")
                    path = os.path.join(folder, f"nccl_trace_rank_{rank}.json")
                with open(path, "wb") as handle:
                    handle.write(data)


if __name__ == "__main__":
    main()
