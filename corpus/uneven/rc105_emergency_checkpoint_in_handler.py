"""On a crash the handler writes an emergency checkpoint with `dcp.save` and re-raises; the save is collective, but only the rank that crashed enters the handler, so it hangs there instead of failing."""
import argparse

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def save_checkpoint(model: nn.Module, opt: torch.optim.Optimizer, step: int) -> None:
    state = {"model": model.state_dict(), "optim": opt.state_dict(), "step": step}
    dcp.save(state, checkpoint_id=f"checkpoints/step_{step}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50000)
    parser.add_argument("--save-every", type=int, default=1000)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    model = DDP(nn.Linear(128, 128))
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    step = 0
    try:
        for step in range(args.steps):
            x = torch.randn(16, 128)
            loss = (model(x) - x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % args.save_every == 0:
                save_checkpoint(model, opt, step)
    except Exception:
        save_checkpoint(model, opt, step)  # expect: RC105
        raise
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
