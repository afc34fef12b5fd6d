"""The flight-recorder dump layouts rankcheck knows, one per dump `version` string.

A dump is a dict (pickled, or JSON) whose `version` names its layout; that string is the dump
format's own version, not torch's (torch 2.13 writes "2.10"). How each row was established:
*recorded* = written by the torch installed here and checked in as test data; *source* = read in
PyTorch's sources (`NCCLUtils.hpp` / `TraceUtils.h` before the move, `FlightRecorder.hpp` and
`FlightRecorderDetail.hpp` after it, the `version_val` constant and the `dump()` /
`dump_json()` bodies) and PR history; *inferred* = the release mapping is dated from PR history
and may be off by one minor release. Older versions only recorded NCCL ("nccl:all_reduce");
torch 2.13 records gloo too ("gloo:all_reduce").

| version | written by torch | formats | top-level keys (besides `version`) | entry keys |
|---------|------------------|---------|------------------------------------|------------|
| 2.2  | 2.4 (source)            | pickle                | pg_config, entries, nccl_comm_state? | BASE |
| 2.3  | 2.5 (source)            | pickle, json          | + pg_status                          | BASE |
| 2.4  | 2.6 (source)            | pickle, json          | same as 2.3                          | BASE (all_to_all sizes filled) |
| 2.5  | 2.7 (inferred)          | pickle, json          | same as 2.3                          | BASE |
| 2.6  | 2.8 dev (source: PR)    | pickle, json          | + nccl_version                       | BASE |
| 2.7  | 2.8 (source)            | pickle, json          | + nccl_version                       | BASE |
| 2.8  | 2.9 dev (inferred)      | pickle, json          | nccl_version or comm_lib_version     | BASE + thread_id?, thread_name? |
| 2.9  | 2.9 (inferred)          | pickle, json          | nccl_version or comm_lib_version     | BASE + thread_id?, thread_name? |
| 2.10 | 2.10 - 2.13 (recorded)  | pickle, json          | comm_lib_version, pg_config, pg_status, entries, nccl_comm_state (json) | BASE + thread_id, thread_name |

BASE = record_id, pg_id, process_group (name, desc), collective_seq_id, p2p_seq_id, op_id,
profiling_name, time_created_ns, duration_ms (only when timing was enabled), input_sizes,
input_dtypes, output_sizes, output_dtypes, state (scheduled/started/completed),
time_discovered_started_ns, time_discovered_completed_ns, retired, timeout_ms, is_p2p, and
`frames` (list of {name, filename, line}) in pickle dumps only: torch's JSON dump never carries
stacks. JSON differences from pickle in every version that has it: `process_group` is a list,
`pg_status` counters are strings, undiscovered times are 0 instead of None, and `entries` is
left out when there are none (2.7+). `pg_config` maps a group name to {name, desc, ranks}, ranks
being a string like "[0, 1]"; torch 2.13's gloo groups register under the name "" so the last
group created wins (recorded here): rankcheck treats pg_config as a hint, not as the truth.

What each rankcheck step needs from an entry: profiling_name, collective_seq_id and
process_group (or pg_id). Everything else is optional and read when present.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, Tuple

BASE_ENTRY_KEYS: FrozenSet[str] = frozenset(
    {
        "record_id",
        "pg_id",
        "process_group",
        "collective_seq_id",
        "p2p_seq_id",
        "op_id",
        "profiling_name",
        "time_created_ns",
        "input_sizes",
        "input_dtypes",
        "output_sizes",
        "output_dtypes",
        "state",
        "time_discovered_started_ns",
        "time_discovered_completed_ns",
        "retired",
        "timeout_ms",
        "is_p2p",
    }
)

# The keys rankcheck cannot work without, in every version.
REQUIRED_ENTRY_KEYS: Tuple[str, ...] = ("profiling_name", "collective_seq_id")


@dataclass(frozen=True)
class Layout:
    version: str
    torch_releases: str  # which torch releases write it
    provenance: str  # "recorded" | "source" | "inferred"
    formats: Tuple[str, ...]  # "pickle", "json"
    top_keys: FrozenSet[str]  # besides "version"; keys that may be absent are still listed
    entry_keys: FrozenSet[str]  # pickle entries; json entries lack "frames"


def _layout(version, torch_releases, provenance, formats, top_keys, extra_entry_keys=()):
    return Layout(
        version=version,
        torch_releases=torch_releases,
        provenance=provenance,
        formats=tuple(formats),
        top_keys=frozenset(top_keys),
        entry_keys=BASE_ENTRY_KEYS | {"frames", "duration_ms"} | frozenset(extra_entry_keys),
    )


_PG = ("pg_config", "entries", "nccl_comm_state")
_PG_STATUS = _PG + ("pg_status",)
_THREADS = ("thread_id", "thread_name")

LAYOUTS: Dict[str, Layout] = {
    layout.version: layout
    for layout in (
        _layout("2.2", "2.4", "source", ["pickle"], _PG),
        _layout("2.3", "2.5", "source", ["pickle", "json"], _PG_STATUS),
        _layout("2.4", "2.6", "source", ["pickle", "json"], _PG_STATUS),
        _layout("2.5", "2.7", "inferred", ["pickle", "json"], _PG_STATUS),
        _layout("2.6", "2.8 (development)", "source", ["pickle", "json"],
                _PG_STATUS + ("nccl_version",)),
        _layout("2.7", "2.8", "source", ["pickle", "json"], _PG_STATUS + ("nccl_version",)),
        _layout("2.8", "2.9 (development)", "inferred", ["pickle", "json"],
                _PG_STATUS + ("nccl_version", "comm_lib_version"), _THREADS),
        _layout("2.9", "2.9", "inferred", ["pickle", "json"],
                _PG_STATUS + ("nccl_version", "comm_lib_version"), _THREADS),
        _layout("2.10", "2.10 - 2.13", "recorded", ["pickle", "json"],
                _PG_STATUS + ("comm_lib_version",), _THREADS),
    )
}


def _version_key(version: str) -> Tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))


def known_versions() -> Tuple[str, ...]:
    return tuple(sorted(LAYOUTS, key=_version_key))


def describe_known() -> str:
    """For error messages: `2.2 (torch 2.4), 2.3 (torch 2.5), ...`."""
    return ", ".join(f"{v} (torch {LAYOUTS[v].torch_releases})" for v in known_versions())
