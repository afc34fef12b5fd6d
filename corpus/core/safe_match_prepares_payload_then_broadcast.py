"""A `match` on the rank only prepares the payload; broadcast_object_list runs after the match, on every rank."""
import argparse
import json

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="hparams.json")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    match rank:
        case 0:
            with open(args.config) as f:
                payload = [json.load(f)]
        case _:
            payload = [None]
    dist.broadcast_object_list(payload, src=0)
    hparams = payload[0]

    model = nn.Linear(hparams["dim"], hparams["dim"])
    opt = torch.optim.SGD(model.parameters(), lr=hparams["lr"])
    for _ in range(hparams["steps"]):
        loss = model(torch.randn(4, hparams["dim"])).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
