"""Rank side: the torch flight recorder's dump, the second witness of what really ran.

Our checkpoints record what each rank *tried* to run; the flight recorder (enabled by the launcher
with TORCH_FR_BUFFER_SIZE; it records gloo collectives in recent torch) records what torch really
issued. They must agree; when they do not (a collective issued from C++, as DDP does), the
report shows both. Missing support is not an error: the note says why there is no dump.
"""

from __future__ import annotations

import json
import os


def take() -> tuple[list[list], str]:
    """([[seq, op, state, group, sizes], ...], note)."""
    if os.environ.get("TORCH_FR_BUFFER_SIZE", "0") in ("", "0"):
        return [], "flight recorder off (TORCH_FR_BUFFER_SIZE is 0)"
    try:
        from torch._C import _distributed_c10d as c10d_ext

        raw = c10d_ext._dump_fr_trace_json(True, False)  # type: ignore[attr-defined]  # not in the stubs
        data = json.loads(raw)
    except Exception as exc:  # an older torch, or a build without the recorder
        return [], f"flight recorder unavailable: {type(exc).__name__}: {exc}"
    entries = []
    for entry in data.get("entries", []):
        name = str(entry.get("profiling_name", "?"))
        group = entry.get("process_group") or ["", ""]
        sizes = entry.get("input_sizes") or []
        entries.append(
            [
                int(entry.get("collective_seq_id") or 0),
                name.split(":", 1)[-1],
                str(entry.get("state", "")),
                str(group[1] if len(group) > 1 else group[0]),
                ";".join("x".join(str(d) for d in s) or "scalar" for s in sizes),
            ]
        )
    return entries, ""
