"""Only the destination rank calls gather() to collect the predictions; gather is collective, so
rank 0 waits in it while rank 1 waits at the barrier."""
import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    torch.manual_seed(8)
    model = nn.Linear(3, 2)
    with torch.no_grad():
        preds = model(torch.randn(4, 3)).argmax(dim=1).float()
    if rank == 0:
        bucket = [torch.zeros(4) for _ in range(world_size)]
        dist.gather(preds, gather_list=bucket, dst=0)  # expect: RC101
        print("class histogram", torch.cat(bucket).long().bincount(minlength=2).tolist())
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
