"""Barriers and the "node rank 0 goes first" context used around downloads."""

import logging
from contextlib import ContextDecorator
from datetime import timedelta

import torch.distributed as dist

logger = logging.getLogger(__name__)


def _create_gloo_group():
    """A CPU (gloo) group spanning the whole world, so barriers can carry a timeout.

    ``new_group`` is itself collective: every rank of the default group has to call it.
    """
    if not dist.is_initialized():
        return None
    try:
        return dist.new_group(backend="gloo")
    except Exception as err:  # pragma: no cover - depends on the cluster
        logger.warning("could not create a gloo group: %s", err)
        return None


def _barrier_with_timeout(timeout: timedelta, group=None) -> bool:
    """monitored_barrier on a throw-away gloo group; plain barrier as fallback."""
    if not dist.is_initialized() or dist.get_world_size() == 1:
        return True
    gloo_group = _create_gloo_group()
    if gloo_group is None:
        try:
            dist.barrier(group=group)
            return True
        except Exception as err:
            logger.warning("barrier failed: %s", err)
            return False
    try:
        dist.monitored_barrier(group=gloo_group, timeout=timeout)
        return True
    except Exception as err:
        logger.warning("monitored barrier failed: %s", err)
        return False
    finally:
        try:
            dist.destroy_process_group(gloo_group)
        except Exception:
            pass


class FirstRankPerNode(ContextDecorator):
    """Let global rank 0 run the body first; everybody else waits for it.

    Every rank of the job must enter the context: the non-first ranks block in
    ``__enter__``'s barrier, rank 0 releases them with the barrier in ``__exit__``.
    """

    def __init__(self, timeout: timedelta = timedelta(hours=10)):
        self._timeout = timeout
        self._first = True

    def __enter__(self) -> bool:
        if not dist.is_initialized() or dist.get_world_size() == 1:
            self._first = True
            return True
        self._first = dist.get_rank() == 0
        if not self._first:
            if not _barrier_with_timeout(self._timeout):
                logger.warning("timed out waiting for rank 0; continuing")
        return self._first

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self._first and dist.is_initialized() and dist.get_world_size() > 1:
            if not _barrier_with_timeout(self._timeout):
                logger.warning("timed out releasing the waiting ranks")
        if exc_type is not None:
            logger.error("download step failed on rank %s: %s", dist.get_rank() if dist.is_initialized() else 0, exc_val)
        return False


def barrier_and_log(message: str) -> None:
    if dist.is_initialized():
        dist.barrier()
    logger.info(message)
