"""A `match` on the rank's role sends the leader through `broadcast_object_list` of the run config and the workers through `all_gather_object`: every role issues a collective, but different ones."""
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
        case "leader":  # expect: RC106
            with open(args.config) as f:
                payload[0] = json.load(f)
            dist.broadcast_object_list(payload, src=0)
        case _:
            everyone = [None] * dist.get_world_size()
            dist.all_gather_object(everyone, {"rank": rank})
            payload[0] = everyone[0]
    print(f"rank {rank} runs with {payload[0]}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
