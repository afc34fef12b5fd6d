"""Shared helpers for the robustness tests (issue 8): a project with a known hazard next to the
hostile input, the CLI run as a subprocess that can be measured (wall time, peak RSS) and killed
with everything it started, and the switches for the slow tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

import pytest

from rankcheck.ftypes import Finding

# The hazard every robustness run carries beside the hostile input: whatever else happens in the
# run, this RC101 must still be reported (the rest of the run is never lost).
HAZARD = textwrap.dedent(
    """\
    import torch.distributed as dist


    def step(t):
        if dist.get_rank() == 0:
            dist.all_reduce(t)
    """
)
HAZARD_NAME = "hazard.py"
HAZARD_LINE = 6
HAZARD_CODE = "RC101"

SLOW_ENABLED = os.environ.get("RANKCHECK_SLOW_TESTS") == "1"
slow = pytest.mark.skipif(not SLOW_ENABLED, reason="slow input (minutes, GBs): set RANKCHECK_SLOW_TESTS=1 to run it")

# Generous bounds for the big inputs: a CI job must finish and must not be OOM-killed on a
# 2-core runner with 7 GB (GitHub's smallest Linux runner for private repositories).
BIG_INPUT_TIMEOUT_S = 300
BIG_INPUT_RSS_BYTES = 4 * 1024**3
# Hard cap on the address space of a big-input run (the machine is shared): a run over it fails.
BIG_INPUT_ADDRESS_SPACE = 8 * 1024**3

# Running as root, chmod 000 does not stop reads (CAP_DAC_OVERRIDE). Dropping the two DAC
# capabilities from the bounding set makes the permission bits count again for the child.
SETPRIV = shutil.which("setpriv")
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def new_project(base: Path, pyproject: str = "[project]\nname = 'demo'\n") -> Path:
    base.mkdir(parents=True, exist_ok=True)
    (base / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    (base / HAZARD_NAME).write_text(HAZARD, encoding="utf-8")
    return base


def hazard_reported(findings: Sequence[Finding], path: str = HAZARD_NAME) -> bool:
    return any(f.code == HAZARD_CODE and f.location.path.endswith(path) and f.location.line == HAZARD_LINE for f in findings)


@dataclass
class CliRun:
    returncode: Optional[int]  # None: killed at the timeout
    stdout: str
    stderr: str
    wall_s: float
    max_rss_bytes: int  # peak RSS of the CLI and the workers it waited for

    @property
    def timed_out(self) -> bool:
        return self.returncode is None

    def findings(self) -> List[dict]:
        """The findings of a `--format json` run."""
        return json.loads(self.stdout)["findings"] if self.stdout.strip() else []

    def describe(self) -> str:
        return (
            f"rc={self.returncode} wall={self.wall_s:.1f}s rss={self.max_rss_bytes / 2**20:.0f}MB\n"
            f"--- stdout\n{self.stdout[-3000:]}\n--- stderr\n{self.stderr[-3000:]}"
        )


# Runs in a fresh interpreter so that RUSAGE_CHILDREN covers the CLI (and its pool workers) only,
# not every subprocess the test session started before; kills the CLI's whole process group on
# timeout so no worker outlives the test.
_MEASURE = r"""
import json, os, resource, signal, subprocess, sys, time
spec = json.loads(sys.argv[1])
start = time.monotonic()
limit = spec["address_space_limit"]
def cap_memory():
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
proc = subprocess.Popen(spec["argv"], cwd=spec["cwd"], env=spec["env"], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, start_new_session=True, preexec_fn=cap_memory)
try:
    out, err = proc.communicate(timeout=spec["timeout"])
    code = proc.returncode
except subprocess.TimeoutExpired:
    os.killpg(proc.pid, signal.SIGKILL)
    out, err = proc.communicate()
    code = None
wall = time.monotonic() - start
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
json.dump({"code": code, "out": out.decode("utf-8", "replace"), "err": err.decode("utf-8", "replace"),
           "wall": wall, "rss": rss}, sys.stdout)
"""


def run_cli(
    args: Sequence[str],
    cwd: Path,
    *,
    timeout: float = 120,
    env: Optional[Mapping[str, str]] = None,
    prefix: Sequence[str] = (),
    address_space_limit: int = 0,
) -> CliRun:
    """`python -m rankcheck ARGS` in `cwd`, as a user runs it; `prefix` wraps the command (setpriv);
    `address_space_limit` (bytes) caps the run's memory so a runaway input cannot take the machine."""
    full_env: Dict[str, str] = dict(os.environ)
    full_env.pop("RANKCHECK_DEBUG", None)
    full_env.update(env or {})
    spec = {
        "argv": [*prefix, sys.executable, "-m", "rankcheck", *args],
        "cwd": str(cwd),
        "env": full_env,
        "timeout": timeout,
        "address_space_limit": address_space_limit,
    }
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURE, json.dumps(spec)], capture_output=True, text=True, timeout=timeout + 60
    )
    assert proc.returncode == 0, f"the measuring wrapper failed: {proc.stderr}"
    got = json.loads(proc.stdout)
    return CliRun(got["code"], got["out"], got["err"], got["wall"], got["rss"])


def assert_clean_exit(run: CliRun, allowed=(0, 1)) -> None:
    """A normal end: an expected exit code, no traceback, no internal error, no timeout."""
    assert not run.timed_out, "rankcheck did not finish in time\n" + run.describe()
    assert run.returncode in allowed, run.describe()
    assert "Traceback" not in run.stderr, run.describe()
    assert "internal error" not in run.stderr, run.describe()


def drop_dac_prefix() -> List[str]:
    """The command prefix that makes chmod 000 effective for the child, or [] when not needed.
    Skips the test when it cannot be made effective."""
    if not IS_ROOT:
        return []
    if SETPRIV is None:
        pytest.skip("running as root without setpriv: chmod 000 cannot make a file unreadable here")
    probe = subprocess.run(
        [SETPRIV, "--bounding-set=-dac_override,-dac_read_search", sys.executable, "-c", "pass"], capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip(f"setpriv cannot drop CAP_DAC_OVERRIDE here: {probe.stderr.decode(errors='replace')}")
    return [SETPRIV, "--bounding-set=-dac_override,-dac_read_search"]
