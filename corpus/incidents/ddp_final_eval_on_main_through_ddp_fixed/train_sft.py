"""Safe twin of ddp_final_eval_on_main_through_ddp: the main-rank-only final evaluation runs on
`unwrap(model)`, the plain module, whose forward issues no collective.

Thread: https://github.com/FareedKhan-dev/train-llm-from-scratch/pull/32
"""
import argparse

import torch

from common.dist import cleanup, ddp_wrap, setup, unwrap
from common.evaluation import evaluate


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max_steps", type=int, default=2000)
    parser.add_argument("--eval_every", type=int, default=200)
    parser.add_argument("--out", default="sft.pt")
    return parser.parse_args()


def main(model, train_loader, val_loader):
    args = parse_args()
    ctx = setup()
    model = ddp_wrap(model.to(ctx.device), ctx)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    step = 0
    for batch in train_loader:
        input_ids = batch["input_ids"].to(ctx.device)
        logits = model(input_ids[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch["labels"][:, 1:].flatten().to(ctx.device), ignore_index=-100)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        step += 1
        if step % args.eval_every == 0:
            val_loss = evaluate(model, val_loader, ctx.device)
            if ctx.is_main:
                print(f"step {step}: val loss {val_loss:.4f}")
        if step >= args.max_steps:
            break

    if ctx.is_main:
        final_loss = evaluate(unwrap(model), val_loader, ctx.device)
        print(f"final val loss {final_loss:.4f}")
        torch.save(unwrap(model).state_dict(), args.out)
    cleanup(ctx)
