"""Which stack frames are the user's: not torch, not rankcheck, not the standard library.

A verdict names the user's line ("rank 0 entered all_reduce #2 at train.py:14"), never a frame of
torch's own wrappers, of our instrumentation, or of runpy that started the script.
"""

from __future__ import annotations

import os
import re
import sysconfig
import traceback
from types import FrameType, TracebackType
from typing import List, Optional, Tuple

_RANKCHECK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _torch_dir() -> str:
    # Found without importing torch: the verifier's parent process never imports it.
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return ""
    if spec is None or not spec.submodule_search_locations:
        return ""
    return os.path.dirname(next(iter(spec.submodule_search_locations)))


def _stdlib_dirs() -> tuple[str, ...]:
    dirs = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib")}
    return tuple(os.path.realpath(d) + os.sep for d in dirs if d)


_TORCH_DIR = _torch_dir()
_NOT_USER = tuple(
    p + os.sep
    for p in (_RANKCHECK_DIR, os.path.join(_TORCH_DIR, "torch") if _TORCH_DIR else "")
    if p
)
_STDLIB = _stdlib_dirs()
_site_cache: dict[str, bool] = {}


def is_user_file(filename: str) -> bool:
    cached = _site_cache.get(filename)
    if cached is not None:
        return cached
    if filename.startswith("<"):  # <frozen runpy>, <string>, <stdin>
        result = False
    else:
        real = os.path.realpath(filename)
        site = "site-packages" + os.sep in real or "dist-packages" + os.sep in real
        in_stdlib = real.startswith(_STDLIB) and not site
        result = not real.startswith(_NOT_USER) and not in_stdlib
    _site_cache[filename] = result
    return result


def is_torch_file(filename: str) -> bool:
    return bool(_TORCH_DIR) and os.path.realpath(filename).startswith(
        os.path.join(_TORCH_DIR, "torch") + os.sep
    )


def user_stack(frame: Optional[FrameType], limit: int = 40) -> list[list]:
    """[path, line, function] for each user frame from `frame` outwards (innermost first)."""
    out: list[list] = []
    while frame is not None and len(out) < limit:
        code = frame.f_code
        if is_user_file(code.co_filename):
            out.append([os.path.abspath(code.co_filename), frame.f_lineno, code.co_name])
        frame = frame.f_back
    return out


def trimmed_traceback(exc: BaseException) -> dict:
    """The exception with only user frames kept, outermost first, and a printable text."""
    tb: Optional[TracebackType] = exc.__traceback__
    frames: List[Tuple[str, int, str, Optional[str]]] = []
    for summary in traceback.extract_tb(tb):
        if is_user_file(summary.filename):
            frames.append(
                (os.path.abspath(summary.filename), summary.lineno or 0, summary.name, summary.line)
            )
    lines = ["Traceback (user frames only):"]
    for path, line, func, text in frames:
        lines.append(f'  File "{path}", line {line}, in {func}')
        if text:
            lines.append(f"    {text.strip()}")
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    lines.append(detail)
    return {
        "type": type(exc).__name__,
        "message": str(exc),
        "frames": [list(f[:3]) for f in frames],
        "text": "\n".join(lines),
    }


_FAULTHANDLER_LINE = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')


def parse_faulthandler(text: str) -> tuple[list[list], bool]:
    """Frames of the main thread from a faulthandler dump (innermost first), and whether the
    innermost frame was inside torch (the rank was blocked in a torch call)."""
    blocks = re.split(r"\n(?=(?:Current thread|Thread) 0x)", text.strip())
    chosen = ""
    for block in blocks:
        if "<module>" in block or "Current thread" in block:
            chosen = block
    frames: List[Tuple[str, int, str]] = []
    for raw in (chosen or text).splitlines():
        m = _FAULTHANDLER_LINE.match(raw)
        if m:
            frames.append((m.group("path"), int(m.group("line")), m.group("func")))
    in_torch = bool(frames) and is_torch_file(frames[0][0])
    user = [f for f in frames if is_user_file(f[0])]
    return [[os.path.abspath(p), line, fn] for p, line, fn in user], in_torch
