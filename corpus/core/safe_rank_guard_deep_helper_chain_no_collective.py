"""Rank 0 calls export_artifacts() -> write_model_card() -> render_table(): a deep helper chain that never reaches a collective."""
import argparse
import json
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def render_table(rows: dict) -> str:
    return "\n".join(f"| {k} | {v} |" for k, v in rows.items())


def write_model_card(out_dir: str, metrics: dict) -> None:
    with open(os.path.join(out_dir, "README.md"), "w") as f:
        f.write("# model card\n\n" + render_table(metrics) + "\n")


def export_artifacts(model: nn.Module, out_dir: str, metrics: dict) -> None:
    os.makedirs(out_dir, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(out_dir, "weights.pt"))
    with open(os.path.join(out_dir, "metrics.json"), "w") as f:
        json.dump(metrics, f)
    write_model_card(out_dir, metrics)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="export")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(40):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
    final = loss.detach().reshape(1)
    dist.all_reduce(final)
    if rank == 0:
        export_artifacts(model, args.out, {"final_loss": final.item()})
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
