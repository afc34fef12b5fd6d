"""xtuner-style async DCP checkpoint save with a retry loop: each rank classifies its own exception
as retriable or fatal, and a retrying rank re-enters the barrier and the save alone.

Thread: https://github.com/InternLM/xtuner/pull/1852 ("fix distributed barrier imbalance in async_save_dcp")
Project: InternLM/xtuner (torch.distributed.checkpoint)
What hung: `async_save_dcp` retried a failed save after a barrier, but the retry/fatal decision was
taken per rank from the rank's own exception. "Without this, ranks that classify the exception
differently would deadlock at the barrier": a rank that hit a transient error (the daemon's
EADDRINUSE / "received 0 items of ancdata") swallowed it and went to the retry barrier and a second
DCP save (itself collective), while the ranks whose save succeeded -- or that raised -- never joined.
Fix (the PR, open; the author's own diagnosis): all-reduce (MAX) the retry/fatal decision so every
rank retries or raises together.
Expected rankcheck finding: RC105 on the `except` that swallows the error on one rank and then
issues collectives (barrier, DCP save) from the retry path.
(The helper names and the transient-error test are reconstructed from the PR description.)
"""
import logging
import shutil
from pathlib import Path

import torch.distributed as dist
import torch.distributed.checkpoint as dcp

logger = logging.getLogger(__name__)

TRANSIENT_MARKERS = ("EADDRINUSE", "received 0 items of ancdata", "Connection reset")


def _is_retriable(exc: BaseException) -> bool:
    return isinstance(exc, (OSError, RuntimeError)) and any(m in str(exc) for m in TRANSIENT_MARKERS)


def _prepare_dir(tmp_dir: Path) -> None:
    if dist.get_rank() == 0:
        if tmp_dir.exists():
            shutil.rmtree(tmp_dir)
        tmp_dir.mkdir(parents=True)
    dist.barrier()


def async_save_dcp(state_dict: dict, weights_dir: Path, max_retries: int = 2):
    tmp_dir = weights_dir.with_suffix(".incomplete")
    _prepare_dir(tmp_dir)
    for attempt in range(max_retries + 1):
        try:
            future = dcp.async_save(state_dict, checkpoint_id=str(tmp_dir))
            future.result()
            break
        except Exception as exc:  # expect: RC105
            if _is_retriable(exc) and attempt < max_retries:
                logger.warning(f"[rank {dist.get_rank()}] async DCP save failed ({exc}); retry {attempt + 1}")
                dist.barrier()
                continue
            raise
    dist.barrier()
    if dist.get_rank() == 0:
        tmp_dir.rename(weights_dir)


def maybe_save(trainer_state, step: int, save_every: int, ckpt_root: Path) -> None:
    if step % save_every != 0:
        return
    state_dict = {"model": trainer_state.model_state(), "optim": trainer_state.optim_state()}
    async_save_dcp(state_dict, ckpt_root / f"step-{step}" / "weights")
