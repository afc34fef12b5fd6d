"""Fixed twin of ddp_ace_nan_loss_raise_on_subset_of_ranks: the process group is shut down before
the NaN error is raised (the change PR #850 proposed).
"""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


class NaNLossError(ValueError):
    pass


class Optimization:
    def __init__(self, module: torch.nn.Module, lr: float, use_amp: bool = True):
        self.optimizer = torch.optim.AdamW(module.parameters(), lr=lr)
        self.scaler = torch.cuda.amp.GradScaler(enabled=use_amp)

    def _validate_loss(self, loss: torch.Tensor) -> None:
        if torch.isnan(loss).any():
            message = f"Loss is NaN on rank {dist.get_rank()}: {loss.item()}"
            if dist.is_initialized():
                # shut the process group down so the other ranks fail instead of waiting
                dist.destroy_process_group()
            raise NaNLossError(message)

    def step_weights(self, loss: torch.Tensor) -> None:
        self._validate_loss(loss)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)


class Stepper:
    def __init__(self, module: torch.nn.Module, optimization: Optimization):
        self.module = module
        self.optimization = optimization

    def train_on_batch(self, batch):
        forcing, state = batch["forcing"].cuda(), batch["state"].cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = self.module(torch.cat([state[:, 0], forcing[:, 0]], dim=1))
            loss = torch.nn.functional.mse_loss(pred.float(), state[:, 1].float())
        self.optimization.step_weights(loss)
        return loss.detach()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--batch_size", type=int, default=4)
    args = p.parse_args()

    dist.init_process_group("nccl", timeout=timedelta(minutes=20))
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    from fme_data import CoupledDataset, build_emulator  # project-local modules

    dataset = CoupledDataset(os.environ["DATA_DIR"])
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, num_workers=8)
    module = DDP(build_emulator().cuda(), device_ids=[torch.cuda.current_device()])
    stepper = Stepper(module, Optimization(module, args.lr))
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for batch in loader:
            loss = stepper.train_on_batch(batch)
        if dist.get_rank() == 0:
            print(f"epoch {epoch} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
