"""VLMEvalKit's evaluation driver after its fix (open-compass/VLMEvalKit#726): every rank meets at the
barrier at the top of each dataset's round; only rank 0 evaluates, and with `--mode infer` it goes
on to the next dataset with `continue`. The continue skips nothing collective: what it skips is
rank 0's own evaluation, and the next round begins with the barrier every rank issues."""
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
        dist.barrier()
        print("inferring", name)
        if rank == 0:
            if args.mode == "infer":
                continue
            evaluate(name)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
