"""The interpreter's memo (interp.py): what it shares must not change what is found."""

from __future__ import annotations

from pathlib import Path

from interp_support import record_interpreted

from rankcheck.api import run_check

SYNC_CALLED_FROM_THREE_ROOTS = """\
import torch.distributed as dist


def sync(t):
    dist.all_reduce(t)
    return t


def step_a(t):
    return sync(t)


def step_b(t):
    return sync(t)


def log_on_rank(t, rank):
    if rank == 0:
        sync(t)


def main(t):
    log_on_rank(t, dist.get_rank())
"""


def test_a_root_no_caller_binds_shares_the_run_of_calls_that_pass_nothing_notable(tmp_path: Path, monkeypatch) -> None:
    """`sync` is a root and is called three times with nothing rank-dependent: one interpretation
    serves all four (on Megatron-LM, a sixth of all interpretations were such repeats). The
    helper whose caller binds its `rank` parameter still runs as a root with that binding."""
    (tmp_path / "train.py").write_text(SYNC_CALLED_FROM_THREE_ROOTS, encoding="utf-8")
    interpreted = record_interpreted(monkeypatch)
    findings = run_check([tmp_path / "train.py"], root=tmp_path).findings
    assert [(f.code, f.location.line) for f in findings] == [("RC101", 19)]
    assert interpreted.count("train.sync") == 1
    # Round one without bindings (shared), round two with `rank` bound by `main`, and the call from
    # `main` with the rank itself.
    assert interpreted.count("train.log_on_rank") == 3
