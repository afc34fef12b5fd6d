"""Reconstruction of https://github.com/HannesStark/FlowSite/pull/1

Project: HannesStark/FlowSite (Lightning DDP training of a flow-matching
binding-site design model, lightning_modules/general_module.py).
What hung: batches of very different protein sizes occasionally OOM on one
GPU. `general_step_oom_wrapper` and the overridden `backward` catch the CUDA OOM
RuntimeError, free memory and skip the batch (return None / no backward) on
that rank only. Under DDP the other ranks still run backward, whose gradient
all-reduce waits for the skipping rank; in the next iteration the ranks are
out of step and the job stalls. The PR author: "To keep all DDP ranks in sync
with each other ... the proposed solution simply skips all batches amongst all
ranks if any rank had to skip its batch"; the skip-flag all_gather logic is in
the repository's general_module.py afterwards.
Fix: every rank publishes a skip flag (all_gather) after the step and all ranks
skip together.
The model, losses and logging are trimmed; the OOM handling follows the repo.
Fixed twin: the OOM is still caught locally, but every rank then all_gathers
its skip flag and all ranks skip (or keep) the batch together. Unlike the
merged version, the successful path does not return before the flag exchange
(the merged wrapper returns inside `try`, so a rank that did not OOM skips the
all_gather); the twin keeps the exchange on every path. The backward override
is dropped: an OOM inside DDP's backward happens while the gradient all-reduce
is in flight and is left to raise instead of being swallowed on one rank.
No finding expected.
"""
import argparse
import lightning.pytorch as pl
import torch
import torch.distributed as torch_dist
from torch import Tensor, optim


class GeneralModule(pl.LightningModule):
    def __init__(self, args, model):
        super().__init__()
        self.args = args
        self.model = model
        self.num_invalid_gradients = 0

    def configure_optimizers(self):
        return optim.Adam(self.parameters(), lr=self.args.lr)

    def general_step(self, batch, batch_idx):
        pos_pred, res_pred = self.model(batch)
        pos_loss = torch.square(pos_pred - batch["ligand"].pos).mean()
        res_loss = torch.nn.functional.cross_entropy(res_pred, batch["protein"].aatype)
        loss = pos_loss + self.args.residue_loss_weight * res_loss
        self.log(f"{self.stage}_loss", loss, batch_size=batch.num_graphs, sync_dist=True)
        return loss

    def _free_memory(self):
        for p in self.model.parameters():
            if p.grad is not None:
                del p.grad
        torch.cuda.empty_cache()

    def _any_rank_skipped(self, skip_flag: Tensor) -> bool:
        if not torch_dist.is_initialized():
            return bool(skip_flag.item())
        result = [torch.zeros_like(skip_flag) for _ in range(torch_dist.get_world_size())]
        torch_dist.all_gather(result, skip_flag)
        return bool(torch.stack(result).any().item())

    def general_step_oom_wrapper(self, batch, batch_idx):
        skip_flag = torch.zeros((), device=self.device, dtype=torch.bool)
        out = None
        try:
            out = self.general_step(batch, batch_idx)
        except RuntimeError as e:
            if "CUDA out of memory" in str(e):
                print("| WARNING: ran OOM error, skipping batch. Exception:", str(e))
                self._free_memory()
                skip_flag = torch.ones((), device=self.device, dtype=torch.bool)
            else:
                raise e
        if self._any_rank_skipped(skip_flag):
            return None
        return out

    def on_after_backward(self) -> None:
        for _, param in self.named_parameters():
            if param.grad is not None and not torch.isfinite(param.grad).all():
                self.num_invalid_gradients += 1
                self.zero_grad()
                break


class FlowSiteModule(GeneralModule):
    def training_step(self, batch, batch_idx):
        self.stage = "train"
        return self.general_step_oom_wrapper(batch, batch_idx)

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        self.stage = "val"
        return self.general_step_oom_wrapper(batch, batch_idx)


def main(model, train_loader, val_loader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--residue_loss_weight", type=float, default=0.2)
    parser.add_argument("--num_devices", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=100)
    args = parser.parse_args()

    module = FlowSiteModule(args, model)
    trainer = pl.Trainer(
        accelerator="gpu",
        devices=args.num_devices,
        strategy="ddp_find_unused_parameters_true",
        max_epochs=args.epochs,
        gradient_clip_val=1.0,
    )
    trainer.fit(module, train_loader, val_loader)
