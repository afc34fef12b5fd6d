"""`if is_main():` (imported) guards only printing, a JSON log and torch.save; average() is called by every rank before it."""
import argparse
import json
import os

import torch
import torch.distributed as dist
import torch.nn as nn

from dist_utils import average, is_main


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--out", default="run")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    model = nn.Linear(12, 12)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    if is_main():
        os.makedirs(args.out, exist_ok=True)
    for epoch in range(args.epochs):
        for _ in range(25):
            loss = model(torch.randn(8, 12)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        global_loss = average(loss.reshape(1))
        if is_main():
            print(f"epoch {epoch}: loss {global_loss.item():.4f}")
            with open(os.path.join(args.out, "log.jsonl"), "a") as f:
                f.write(json.dumps({"epoch": epoch, "loss": global_loss.item()}) + "\n")
            torch.save(model.state_dict(), os.path.join(args.out, "last.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
