"""A Lightning callback helper marked @rank_zero_only all-reduces the epoch loss: rank 0 waits in
the all_reduce for ranks that skip the whole function."""
import torch
import torch.distributed as dist
from lightning.pytorch import Callback
from lightning.pytorch.utilities import rank_zero_only


@rank_zero_only
def write_epoch_summary(trainer, loss: torch.Tensor) -> None:  # expect: RC107
    dist.all_reduce(loss, op=dist.ReduceOp.AVG)
    with open("summary.txt", "a") as f:
        f.write(f"epoch {trainer.current_epoch}: {loss.item():.4f}\n")


class SummaryCallback(Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        loss = trainer.callback_metrics["train_loss"].detach().clone()
        write_epoch_summary(trainer, loss)
