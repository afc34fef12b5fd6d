"""One rank's evidence, written into a bundle from the watchdog's thread.

It works while the main thread is blocked inside a C++ collective: the flight recorder is dumped
by a C++ call, faulthandler writes every thread's Python stack without the GIL's help, and
`sys._current_frames()` gives the same stacks as data. py-spy (when installed) adds the native
frames.
"""

from __future__ import annotations

import faulthandler
import json
import os
import shutil
import subprocess
import sys
import threading
import traceback
from typing import Any, Dict, Iterable, List

from rankcheck.runtime import bundle as layout

PY_SPY_TIMEOUT_S = 5.0


def thread_stacks() -> List[Dict[str, Any]]:
    """Every thread's Python stack, innermost frame first, the main thread first."""
    names = {t.ident: t.name for t in threading.enumerate()}
    main = threading.main_thread().ident
    stacks = []
    for ident, frame in sys._current_frames().items():
        frames = []
        for summary in reversed(traceback.extract_stack(frame)):
            frames.append([summary.filename, summary.lineno or 0, summary.name])
        stacks.append({"thread": names.get(ident, str(ident)), "main": ident == main, "frames": frames})
    stacks.sort(key=lambda s: not s["main"])
    return stacks


def _faulthandler_text(path: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        faulthandler.dump_traceback(file=fd, all_threads=True)
    finally:
        os.close(fd)


def _py_spy(path: str) -> None:
    exe = shutil.which("py-spy")
    if not exe:
        return
    try:
        proc = subprocess.run([exe, "dump", "--native", "--pid", str(os.getpid())],
                              capture_output=True, text=True, timeout=PY_SPY_TIMEOUT_S, check=False)
        text = proc.stdout if proc.returncode == 0 else f"py-spy failed: {proc.stderr.strip()}\n"
    except (OSError, subprocess.TimeoutExpired) as exc:
        text = f"py-spy failed: {exc}\n"
    layout.write_file(path, text.encode("utf-8"))


def _flight_recorder(path: str) -> str:
    try:
        from torch._C import _distributed_c10d as c10d_ext

        data = c10d_ext._dump_fr_trace()  # type: ignore[attr-defined]  # not in the stubs
    except Exception as exc:  # a torch without the recorder, or with it off
        return f"no flight-recorder dump: {type(exc).__name__}: {exc}"
    layout.write_file(path, bytes(data))
    return ""


def write_rank_evidence(bundle: str, rank: int, history: Iterable[dict], environment: dict) -> str:
    """Everything this rank can tell, into BUNDLE/rank-R/; returns that directory."""
    folder = layout.make_dir(layout.rank_dir(bundle, rank))
    notes = []
    stacks_text = os.path.join(folder, layout.STACKS_TEXT)
    _faulthandler_text(stacks_text)
    layout.write_json(os.path.join(folder, layout.STACKS_JSON), thread_stacks())
    note = _flight_recorder(os.path.join(folder, f"fr_trace_rank_{rank}"))
    if note:
        notes.append(note)
    lines = "".join(json.dumps(beat, sort_keys=True) + "\n" for beat in history)
    layout.write_file(os.path.join(folder, layout.HEARTBEAT_HISTORY), lines.encode("utf-8"))
    layout.write_json(os.path.join(folder, layout.ENV_FILE), {**environment, "notes": notes})
    _py_spy(os.path.join(folder, layout.PY_SPY))
    layout.write_file(os.path.join(folder, layout.COMPLETE), b"")
    return folder
