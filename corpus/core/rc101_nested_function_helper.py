"""A nested helper defined inside main() all-reduces the sample count; it is called only by rank 0 on log steps."""
import argparse
import time

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(30, 30)
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    samples = 0
    t0 = time.time()

    def log_throughput(step):
        count = torch.tensor([samples], dtype=torch.float64)
        dist.all_reduce(count)
        print(f"step {step}: {count.item() / (time.time() - t0):.1f} samples/s (all ranks)")

    for step in range(args.steps):
        loss = model(torch.randn(args.batch_size, 30)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        samples += args.batch_size
        if rank == 0 and step % args.log_every == 0:
            log_throughput(step)  # expect: RC101
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
