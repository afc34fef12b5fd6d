"""Reading and decoding source: bytes from a file (never blocking, never more than a module can
hold) and the text Python would decode them to."""

from __future__ import annotations

import io
import os
import stat as stat_module
import tokenize
from pathlib import Path
from typing import Optional, Tuple

from rankcheck.frontend.guard import (
    MAX_SOURCE_CHARS,
    python_compiles,
    too_large_problem,
)
from rankcheck.program.ir import ParseProblem


def decode_source(data: bytes) -> Tuple[Optional[str], Optional[ParseProblem]]:
    """Decode file bytes the way Python does (BOM, coding cookie, else UTF-8)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if "encoding" in str(exc) and b"coding" in data[:400]:
            return None, ParseProblem(f"cannot decode file: {exc}", 1, 1)
        encoding = "utf-8"  # undecodable first lines: let the decoder say where
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        # (A file over the size limit is an RC001 anyway: compile() would peak at ~100x its size.)
        if isinstance(exc, UnicodeDecodeError) and len(data) <= MAX_SOURCE_CHARS and python_compiles(data):
            # CPython's tokenizer lets undecodable bytes through inside comments: so do we.
            return data.decode(encoding, errors="replace").lstrip("\ufeff"), None
        start = getattr(exc, "start", 0)
        line = data.count(b"\n", 0, start) + 1
        column = start - (data.rfind(b"\n", 0, start) + 1) + 1
        return None, ParseProblem(
            f"file is not valid {encoding}: byte {data[start:start + 1]!r} at line {line}, column {column}",
            line,
            column,
        )
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, None


# Line ends as Python's tokenizer (and libcst's positions) count them; str.splitlines() also
# splits at form feeds and other separators.

def read_source(path: Path) -> Tuple[Optional[bytes], Optional[str], Optional[ParseProblem]]:
    """A file's bytes and decoded text, or the problem that makes it unreadable (an RC001)."""
    try:
        data = _read_regular_file(path)
    except _TooLarge as exc:
        return None, None, too_large_problem(exc.size)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return None, None, ParseProblem(f"cannot read file: {reason}", 1, 1)
    if data is None:
        return None, None, ParseProblem("cannot read file: not a regular file", 1, 1)
    text, problem = decode_source(data)
    return data, text, problem


class _TooLarge(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


# Bytes above which a file cannot decode to MAX_SOURCE_CHARS characters or fewer (UTF-8 takes at
# most 4 bytes a character): it is too large to analyse whatever it holds, and is not read.
MAX_SOURCE_BYTES = 4 * MAX_SOURCE_CHARS


def _read_regular_file(path: Path) -> Optional[bytes]:
    """The bytes of a regular file; None for a FIFO, a device or a socket; `_TooLarge` above
    MAX_SOURCE_BYTES, before reading any (a multi-gigabyte data dump named .py would fill memory).
    Opened non-blocking: opening a FIFO for reading otherwise waits forever for a writer."""
    fd = os.open(str(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if not stat_module.S_ISREG(st.st_mode):
            return None
        if st.st_size > MAX_SOURCE_BYTES:
            raise _TooLarge(st.st_size)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
