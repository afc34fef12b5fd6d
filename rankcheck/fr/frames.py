"""Which recorded frame is the user's code.

A recorded stack runs innermost first: torch's `distributed_c10d.py`, its `c10d_logger.py`
wrapper, maybe a framework (Lightning, accelerate), then the training script. The user frame is
the innermost Python frame outside installed packages and the standard library; with --source,
the innermost frame inside the source tree wins, whatever its path looks like. With
TORCH_FR_CPP_STACK=1 the stack also holds C++ frames (`Ops.cpp`, `??`), never user frames here.
"""

from __future__ import annotations

import os
import re
from typing import Iterable, List, Optional

from rankcheck.fr.model import Frame

# Paths that belong to an installation, not to the user's project. The dump may come from another
# machine, so this looks at the path's shape rather than at this interpreter's sys.path.
_LIBRARY_PATH = re.compile(
    r"[/\\](site-packages|dist-packages)[/\\]"
    r"|[/\\]lib(64)?[/\\]python\d+(\.\d+)?[/\\]"
    # (py-spy prints paths relative to sys.path: `torch/distributed/...` with no leading slash)
    r"|(^|[/\\])torch[/\\](distributed|nn|utils|autograd|_[a-z_]+)[/\\]"
    # rankcheck's own wrappers around the collectives (the verifier, the run-time guard)
    r"|(^|[/\\])rankcheck[/\\](verify|runtime)[/\\]"
)


def is_python_frame(frame: Frame) -> bool:
    return frame.filename.endswith((".py", ".pyw")) and frame.line > 0


def is_user_frame(frame: Frame) -> bool:
    return (
        is_python_frame(frame)
        and not frame.filename.startswith("<")
        and not _LIBRARY_PATH.search(frame.filename)
    )


def user_frames(frames: Iterable[Frame]) -> List[Frame]:
    return [f for f in frames if is_user_frame(f)]


def user_frame(frames: Iterable[Frame], source_root: Optional[str] = None) -> Optional[Frame]:
    """The innermost frame of the user's code, or None when the stack has none."""
    frames = list(frames)
    if source_root:
        for frame in frames:
            if is_python_frame(frame) and local_path(frame.filename, source_root):
                return frame
    users = user_frames(frames)
    return users[0] if users else None


def local_path(recorded: str, source_root: str) -> Optional[str]:
    """Where a recorded file lives under `source_root`, if it does.

    The dump usually comes from another machine (/workspace/train.py on the cluster,
    ~/proj/train.py here), so after the exact path this tries the longest tail of the recorded
    path that exists below the source root.
    """
    root = os.path.realpath(source_root)
    if os.path.isfile(root):
        candidates = [root]
        root_dir = os.path.dirname(root)
    else:
        candidates = []
        root_dir = root
    exact = os.path.realpath(recorded) if os.path.isabs(recorded) else None
    if exact and os.path.isfile(exact) and (exact == root or exact.startswith(root_dir + os.sep)):
        return exact
    parts = [p for p in re.split(r"[/\\]+", recorded) if p and p != "."]
    for start in range(len(parts)):
        tail = os.path.join(root_dir, *parts[start:])
        if os.path.isfile(tail) and (not candidates or os.path.realpath(tail) in candidates):
            return os.path.realpath(tail)
    return None
