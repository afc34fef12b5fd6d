"""Ctrl-C and SIGTERM as a user sends them to a real run on a project that takes seconds: the run
stops within a couple of seconds with the shell's exit code, its worker processes gone, and the
summaries computed before the signal are in the cache for the next run. The progress bar (on a
terminal) moves file by file."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import List, Tuple

import pytest

pytestmark = pytest.mark.slow

FILES = 120
BAR = re.compile(r"summarizing \[[#-]+\] (\d+)/(\d+) files")
STATS = re.compile(r"computed (\d+) summaries and \d+ minimal ones \((\d+) from the cache\)")


def _module(index: int) -> str:
    functions = "\n".join(
        textwrap.dedent(
            f"""\
            def step_{index}_{j}(t, scale=2):
                values = [k * scale for k in range(10)]
                if values and t is not None:
                    dist.all_reduce(t)
                return {{"index": {j}, "values": values}}
            """
        )
        for j in range(40)
    )
    return "import torch.distributed as dist\n\n\n" + functions


@pytest.fixture(scope="module")
def big_project(tmp_path_factory) -> Path:
    """About 30k lines that name collectives everywhere: every file is parsed (seconds of work)."""
    root = tmp_path_factory.mktemp("big")
    (root / "pyproject.toml").write_text("[project]\nname = 'big'\n")
    for index in range(FILES):
        (root / f"m{index}.py").write_text(_module(index))
    return root


def _env() -> dict:
    env = dict(os.environ, RANKCHECK_STATS="1", TERM="xterm")
    env.pop("NO_PROGRESS", None)
    return env


def _default_sigint() -> None:  # runs in the child between fork and exec
    # A shell starts a command with Ctrl-C at its default; a test process may have it ignored
    # (an earlier test in the same pytest-xdist worker), and an ignored SIGINT is inherited across
    # exec: Python then keeps ignoring it, and the run never sees the signal this test sends.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_on_a_terminal(root: Path, signum: int, after_counts: int) -> Tuple[int, float, List[int], str]:
    """Run a cold check with stderr on a pseudo-terminal, send `signum` once the bar shows
    `after_counts` different counts of files done; (exit code, seconds from the signal to the exit, the counts the bar
    showed, what it wrote)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "rankcheck", "--jobs", "2", "--format", "concise", "."],
        cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave, env=_env(), start_new_session=True,
        preexec_fn=_default_sigint,
    )
    os.close(slave)
    written = b""
    counts: List[int] = []
    sent_at = None
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the other side closed: the process is gone
                    chunk = b""
                if not chunk and proc.poll() is not None:
                    break
                written += chunk
                counts = [int(done) for done, _ in BAR.findall(written.decode(errors="replace"))]
            if sent_at is None and len(set(counts)) >= after_counts:
                proc.send_signal(signum)
                sent_at = time.monotonic()
            if proc.poll() is not None and not ready:
                break
        code = proc.wait(timeout=30)
        elapsed = time.monotonic() - (sent_at if sent_at is not None else time.monotonic())
    finally:
        os.close(master)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert sent_at is not None, f"the bar never showed {after_counts} counts: {written[-500:]!r}"
    try:  # the workers were in the run's session: none may outlive it
        os.killpg(proc.pid, 0)
        survivors = True
    except ProcessLookupError:
        survivors = False
    assert not survivors, "worker processes survived the interrupted run"
    return code, elapsed, counts, written.decode(errors="replace")


def _second_run(root: Path) -> Tuple[int, int]:
    proc = subprocess.run([sys.executable, "-m", "rankcheck", "--format", "concise", "."], cwd=root, capture_output=True, text=True,
                          env=_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    computed, cached = STATS.search(proc.stderr).groups()  # type: ignore[union-attr]
    return int(computed), int(cached)


@pytest.mark.parametrize("signum, expected", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_one_signal_stops_the_run_at_once_and_keeps_its_summaries(big_project: Path, signum: int, expected: int) -> None:
    cache = big_project / ".rankcheck_cache"
    subprocess.run(["rm", "-rf", str(cache)], check=True)
    code, elapsed, counts, written = _interrupt_on_a_terminal(big_project, signum, after_counts=5)
    assert code == expected, written[-500:]
    assert elapsed < 2.0, f"took {elapsed:.1f} s to stop"
    assert ("interrupted" if signum == signal.SIGINT else "terminated") in written
    # The bar moved file by file, not in chunks of a quarter of the project.
    steps = [b - a for a, b in zip(counts, counts[1:]) if b != a]
    assert len(set(counts)) >= 5 and max(steps) <= 10, counts
    done_before_signal = counts[-1]
    computed, cached = _second_run(big_project)
    assert cached >= done_before_signal and computed + cached == FILES, (computed, cached, done_before_signal)
    assert computed > 0  # it was interrupted mid-run, not after the summaries
