"""Course example: train a tiny mixture-of-experts regressor with DeepSpeed, optionally with expert
parallelism (`--expert-parallel`), then print a short evaluation on the main process.
Launch: `deepspeed --num_gpus 2 train_moe.py --expert-parallel`.

Thread: https://github.com/yiqiao-yin/deepspeed-course/pull/28 ("fix: Run the MoE eval on every rank, and tear down together")
Project: yiqiao-yin/deepspeed-course
What hung: with `--expert-parallel`, training finished, then the job hung ~11 minutes and exited
-6. `main()` had the non-main ranks `return` before the evaluation, and rank 0 then called
`model_engine(xe.unsqueeze(0))`, whose MoELayer forward does an ALL-TO-ALL under expert
parallelism; the peers had already left, so rank 0 waited in the all-to-all until the NCCL
watchdog aborted it. On the default (non-EP) path the forward has no collectives, which is why
only the EP configuration hung.
Fix (the PR): the eval forward runs on every rank, only the printing is guarded, and every rank
reaches `dist.barrier()` + `destroy_process_group()` ("Guard the output, never the collective").
Expected rankcheck finding: RC102 on the rank-dependent `return` of the non-main ranks, which
leaves rank 0 alone in the MoE all-to-all of the eval forward (moe.py).
Inferred: the data, model sizes, DeepSpeed config, the MoE layer in moe.py (a hand-written top-1
router whose expert-parallel path uses all_to_all_single) and the way `is_main` is computed (here
from the RANK environment variable); the `if not is_main: return` / `model_engine(xe.unsqueeze(0))`
shape is quoted in the PR.
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

    if not is_main:
        return  # expect: RC102

    # quick look at a held-out point (main process only)
    model_engine.eval()
    xe, ye = make_batch(1, 32, device)
    xe, ye = xe[0], ye[0]
    with torch.no_grad():
        out = model_engine(xe.unsqueeze(0).to(torch.bfloat16))
    print(f"eval: target {ye.item():+.3f}  pred {out.float().item():+.3f}")
    print("done")


if __name__ == "__main__":
    main()
