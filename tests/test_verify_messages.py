"""`rankcheck verify` as a new user first runs it (the CLI as a subprocess, real gloo ranks): it
never reassures when nothing ran, points at `--fixture` when a function needs arguments, and
labels a divergence no static finding predicted with the rule it is an instance of, at the call."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.verify, pytest.mark.slow]

pytest.importorskip("torch")

LIBRARY = """\
import torch.distributed as dist


def train_step(model, batch):
    loss = model(batch).sum()
    dist.all_reduce(loss)
    return loss
"""

# The shape comes from the rank by a way the static analysis does not follow (a dict copy of the
# environment), so the replay's divergence is predicted by no finding.
UNSEEN_SHAPES = """\
import os

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    t = torch.zeros(4 + 4 * dict(os.environ)["RANK"].count("1"))
    if t.numel() > 0:  dist.all_reduce(t)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
"""
UNSEEN_CALL = (10, 24)  # line and column of `dist.all_reduce(t)`


def verify(args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rankcheck", "verify", *args], cwd=cwd, capture_output=True, text=True, timeout=180)


def test_a_file_that_only_defines_functions_is_not_reached_not_a_pass(tmp_path: Path) -> None:
    (tmp_path / "lib.py").write_text(LIBRARY)
    proc = verify(["lib.py"], tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "nothing ran: lib.py only defines functions and classes; name an entry point with path.py::func and --fixture" in proc.stdout
    assert "no divergence" not in proc.stdout


def test_a_function_that_takes_arguments_points_at_fixture_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "lib.py").write_text(LIBRARY)
    proc = verify(["lib.py::train_step"], tmp_path)
    assert proc.returncode == 2 and "TypeError" not in proc.stdout + proc.stderr
    assert proc.stderr == (
        "rankcheck verify: error: train_step() takes arguments (model, batch); pass them with --fixture module:function, "
        "a function that returns them (a tuple of positional arguments, or a dict of keyword arguments)\n"
    )
    assert "about to" not in proc.stdout  # refused before starting any rank


def test_an_unpredicted_shape_mismatch_is_rc104_at_the_call_said_once(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(textwrap.dedent(UNSEEN_SHAPES))
    static = subprocess.run([sys.executable, "-m", "rankcheck", "--format", "json", "shapes.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert json.loads(static.stdout)["findings"] == []  # nothing predicted it
    proc = verify(["shapes.py"], tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line, column = UNSEEN_CALL
    (reported,) = [text for text in proc.stdout.splitlines() if "[unpredicted]" in text]
    assert reported == (f"shapes.py:{line}:{column}: RC104 [unpredicted] collective argument differs between ranks: "
                        "observed on 2 gloo ranks and predicted by no static finding")
    sentence = f"rank 0 entered all_reduce #1 at shapes.py:{line} with f32[4] SUM; rank 1 entered all_reduce #1 at shapes.py:{line} with f32[8] SUM"
    assert proc.stdout.count(sentence) == 1, proc.stdout
