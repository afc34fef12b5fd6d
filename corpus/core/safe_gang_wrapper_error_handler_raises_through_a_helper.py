"""Safe look-alike of rc105_gang_wrapper_error_handler_only_logs.py: the handler calls a helper
that raises the wrapper's own error from the failure on every path (fairseq2's gang idiom), so the
failing rank does not go on: the error reaches the caller as if the handler had raised it."""
import logging
from typing import NoReturn

import torch
import torch.distributed as dist

log = logging.getLogger(__name__)


class GangError(RuntimeError):
    pass


class Gang:
    def __init__(self, pg) -> None:
        self._pg = pg

    def all_reduce(self, tensor: torch.Tensor, op: str) -> None:
        try:
            dist.all_reduce(tensor, self._get_reduce_op(op), group=self._pg)
        except RuntimeError as ex:
            self._raise_op_failed(ex, "all_reduce")

    @staticmethod
    def _raise_op_failed(cause: Exception, op: str) -> NoReturn:
        log.error("`%s()` collective operation failed", op)
        raise GangError(f"`{op}()` collective operation failed.") from cause


    @staticmethod
    def _get_reduce_op(op: str):
        if op == "sum":
            return dist.ReduceOp.SUM
        if op == "max":
            return dist.ReduceOp.MAX
        raise ValueError(f"`op` must be 'sum' or 'max', but is '{op}' instead.")


def train_step(gang: Gang, loss: torch.Tensor) -> None:
    gang.all_reduce(loss, "sum")
    dist.barrier()
