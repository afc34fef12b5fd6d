"""A process-group wrapper whose collectives turn a failure into a log line: the handler calls a
helper that only logs, so a rank whose all_reduce failed returns as if it had succeeded and goes
on to the next collective while the other ranks are still in this one."""
import logging

import torch
import torch.distributed as dist

log = logging.getLogger(__name__)


class Gang:
    def __init__(self, pg) -> None:
        self._pg = pg

    def all_reduce(self, tensor: torch.Tensor, op: str) -> None:
        try:
            dist.all_reduce(tensor, self._get_reduce_op(op), group=self._pg)
        except RuntimeError as ex:  # expect: RC105
            self._report_failure(ex, "all_reduce")

    @staticmethod
    def _report_failure(cause: Exception, op: str) -> None:
        log.warning("`%s()` collective operation failed: %s", op, cause)


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
