"""The VLMEvalKit driver before its fix (open-compass/VLMEvalKit#726): the barrier comes at the end
of each dataset's round, after rank 0's evaluation. With `--mode infer`, rank 0 goes on to the next
dataset with `continue` and never reaches the barrier the other ranks wait in."""
import argparse
import datetime

import torch.distributed as dist


def evaluate(name):
    print("evaluating", name)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", nargs="+", default=["mmbench", "mme"])
    parser.add_argument("--mode", default="all", choices=["all", "infer"])
    args = parser.parse_args()
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    rank = dist.get_rank()
    for name in args.data:
        print("inferring", name)
        if rank == 0:
            if args.mode == "infer":
                continue  # expect: RC102
            evaluate(name)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
