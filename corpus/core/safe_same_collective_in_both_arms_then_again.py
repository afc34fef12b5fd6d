"""Rank 0 broadcasts its config, the others receive it, from another line of the other arm; then
every rank broadcasts the weights the same way: the same collectives, in the same order, on
every rank."""
import json

import torch.distributed as dist
import torch.nn as nn


def main(config_path: str = "config.json") -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if rank == 0:
        with open(config_path) as f:
            box = [json.load(f)]
        dist.broadcast_object_list(box, src=0)
    else:
        box = [None]
        dist.broadcast_object_list(box, src=0)
    dist.broadcast_object_list(box, src=0)
    model = nn.Linear(box[0]["width"], 1)
    for p in model.parameters():
        dist.broadcast(p.data, src=0)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
