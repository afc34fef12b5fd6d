"""Safe twin of dcp_async_save_retry_decided_per_rank: every rank records its own outcome, the
retry/fatal decision is all-reduced with MAX, and all ranks retry or raise together (the PR's fix).

Thread: https://github.com/InternLM/xtuner/pull/1852
"""
import logging
import shutil
from pathlib import Path

import torch
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
        error = None
        try:
            future = dcp.async_save(state_dict, checkpoint_id=str(tmp_dir))
            future.result()
        except Exception as exc:
            error = exc
        code = 0 if error is None else (1 if _is_retriable(error) and attempt < max_retries else 2)
        decision = torch.tensor([code], device="cuda")
        dist.all_reduce(decision, op=dist.ReduceOp.MAX)
        if decision.item() == 0:
            break
        if decision.item() == 1:
            logger.warning(f"[rank {dist.get_rank()}] async DCP save failed on some rank; retry {attempt + 1}")
            dist.barrier()
            continue
        raise error if error is not None else RuntimeError("async DCP save failed on another rank")
    dist.barrier()
    if dist.get_rank() == 0:
        tmp_dir.rename(weights_dir)


def maybe_save(trainer_state, step: int, save_every: int, ckpt_root: Path) -> None:
    if step % save_every != 0:
        return
    state_dict = {"model": trainer_state.model_state(), "optim": trainer_state.optim_state()}
    async_save_dcp(state_dict, ckpt_root / f"step-{step}" / "weights")
