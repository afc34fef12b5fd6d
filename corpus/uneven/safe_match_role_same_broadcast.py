"""A `match` on the rank's role: the leader loads the run config, the workers prepare an empty slot, and every role then calls the same `broadcast_object_list(src=0)`."""
import argparse
import json

import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="run.json")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    role = "leader" if rank == 0 else "worker"
    payload = [None]
    match role:
        case "leader":
            with open(args.config) as f:
                payload[0] = json.load(f)
            dist.broadcast_object_list(payload, src=0)
        case _:
            dist.broadcast_object_list(payload, src=0)
    print(f"rank {rank} runs with {payload[0]}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
