"""Safe twin of deepspeed_course_moe_eval_after_nonmain_return/train_moe.py: the eval forward runs
on every rank (under expert parallelism its MoE all-to-alls need all ranks), only the printing is
guarded by `is_main`, and every rank reaches `dist.barrier()` and `destroy_process_group()`.

Thread: https://github.com/yiqiao-yin/deepspeed-course/pull/28
"""
import argparse
import os

import deepspeed
import torch
import torch.distributed as dist

from moe import TinyMoEModel


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--local_rank", type=int, default=-1)
    p.add_argument("--expert-parallel", action="store_true")
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--num-experts", type=int, default=8)
    p = deepspeed.add_config_arguments(p)
    return p.parse_args()


DS_CONFIG = {
    "train_micro_batch_size_per_gpu": 64,
    "optimizer": {"type": "AdamW", "params": {"lr": 1e-3}},
    "bf16": {"enabled": True},
    "zero_optimization": {"stage": 0},
}


def make_batch(n, d_in, device):
    x = torch.randn(n, d_in, device=device)
    y = torch.sin(x[:, :4].sum(-1)) + 0.1 * x[:, 4]
    return x, y


def main():
    args = parse_args()
    deepspeed.init_distributed()
    is_main = int(os.environ.get("RANK", "0")) == 0
    torch.manual_seed(1234 + dist.get_rank())

    model = TinyMoEModel(num_experts=args.num_experts, expert_parallel=args.expert_parallel)
    model_engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                                 config=DS_CONFIG)
    device = model_engine.device

    for step in range(args.steps):
        x, y = make_batch(64, 32, device)
        pred = model_engine(x.to(torch.bfloat16))
        loss = torch.nn.functional.mse_loss(pred.float(), y)
        model_engine.backward(loss)
        model_engine.step()
        if is_main and step % 50 == 0:
            print(f"step {step}: loss {loss.item():.4f}")

    # quick look at a held-out point: the forward runs on every rank, only the output is guarded
    model_engine.eval()
    xe, ye = make_batch(1, 32, device)
    xe, ye = xe[0], ye[0]
    with torch.no_grad():
        out = model_engine(xe.unsqueeze(0).to(torch.bfloat16))
    if is_main:
        print(f"eval: target {ye.item():+.3f}  pred {out.float().item():+.3f}")
        print("done")

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
