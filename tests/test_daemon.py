"""`rankcheck check --daemon`: the same output and exit code as a check in-process, after edits on
disk too; `rankcheck daemon status|stop`; a killed daemon is replaced; a daemon that cannot be
used leaves the check to the calling process. All through the command line, as users run it."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from rankcheck.integrations import daemon

REPO = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not daemon.supported(), reason="the daemon needs AF_UNIX sockets and fork")]

TRAIN = """\
import torch.distributed as dist
from helpers import sync

def step(t):
    if dist.get_rank() == 0:
        sync(t)
"""
HELPERS_LOCAL = "def sync(t):\n    return t\n"
HELPERS_COLLECTIVE = "import torch.distributed as dist\n\ndef sync(t):\n    dist.all_reduce(t)\n"


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    (root / "train.py").write_text(TRAIN)
    (root / "helpers.py").write_text(HELPERS_LOCAL)
    # A short private directory for the socket (socket paths are limited to ~100 bytes).
    runtime = Path(tempfile.mkdtemp(prefix="rcd"))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    env["XDG_RUNTIME_DIR"] = str(runtime)
    env.pop("RANKCHECK_DAEMON", None)
    yield root, env
    subprocess.run([sys.executable, "-m", "rankcheck", "daemon", "stop"], cwd=root, env=env, capture_output=True, timeout=60)
    shutil.rmtree(runtime, ignore_errors=True)


def rankcheck(root: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rankcheck", *args], cwd=root, env=env, capture_output=True, text=True, timeout=120)


def check_both_ways(root: Path, env: dict) -> subprocess.CompletedProcess:
    through = rankcheck(root, env, "check", "--daemon", "--output-format", "json", ".")
    local = rankcheck(root, env, "check", "--output-format", "json", ".")
    assert through.returncode == local.returncode, (through.stderr, local.stderr)
    assert json.loads(through.stdout) == json.loads(local.stdout)
    assert "daemon is unavailable" not in through.stderr, through.stderr
    return through


def test_the_daemon_answers_as_the_process_would_after_edits(project):
    root, env = project
    assert check_both_ways(root, env).returncode == 0
    (root / "helpers.py").write_text(HELPERS_COLLECTIVE)  # edited on disk between two checks
    found = check_both_ways(root, env)
    assert found.returncode == 1 and [f["code"] for f in json.loads(found.stdout)["findings"]] == ["RC101"]
    (root / "helpers.py").write_text(HELPERS_LOCAL)
    assert check_both_ways(root, env).returncode == 0
    status = rankcheck(root, env, "daemon", "status")
    assert status.returncode == 0 and "running" in status.stdout and str(root) in status.stdout, status.stdout
    stopped = rankcheck(root, env, "daemon", "stop")
    assert "stopped" in stopped.stdout
    assert rankcheck(root, env, "daemon", "status").returncode == 1
    sockets = list(Path(env["XDG_RUNTIME_DIR"]).rglob("*.sock"))
    assert sockets == [], sockets


def test_a_killed_daemon_is_replaced(project):
    root, env = project
    check_both_ways(root, env)
    status = rankcheck(root, env, "daemon", "status").stdout
    pid = int(status.split("pid ")[1].split(")")[0])
    os.kill(pid, signal.SIGKILL)  # leaves its socket file behind
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.05)
    (root / "helpers.py").write_text(HELPERS_COLLECTIVE)
    found = check_both_ways(root, env)
    assert found.returncode == 1
    assert f"pid {pid})" not in rankcheck(root, env, "daemon", "status").stdout


def test_a_daemon_that_cannot_be_used_leaves_the_check_to_the_process(project):
    root, env = project
    shared = Path(env["XDG_RUNTIME_DIR"]) / f"rankcheck-{os.getuid()}"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # others could enter it: no socket there
    result = rankcheck(root, env, "check", "--daemon", "--output-format", "json", ".")
    local = rankcheck(root, env, "check", "--output-format", "json", ".")
    assert "the daemon is unavailable" in result.stderr and "not private" in result.stderr
    assert json.loads(result.stdout) == json.loads(local.stdout) and result.returncode == local.returncode


def test_a_bad_request_does_not_end_the_daemon(project):
    root, env = project
    check_both_ways(root, env)
    (path,) = Path(env["XDG_RUNTIME_DIR"]).rglob("*.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(30)
        conn.connect(str(path))
        garbage = b"not json"
        conn.sendall(struct.pack(">I", len(garbage)) + garbage)
        size = struct.unpack(">I", conn.recv(4))[0]
        data = b""
        while len(data) < size:
            data += conn.recv(size - len(data))
    assert "error" in pickle.loads(data)
    assert rankcheck(root, env, "daemon", "status").returncode == 0
    (root / "train.py").write_text(textwrap.dedent(TRAIN) + "\n")
    check_both_ways(root, env)
