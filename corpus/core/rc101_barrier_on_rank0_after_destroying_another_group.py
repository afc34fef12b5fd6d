"""Destroying one process group (the evaluation subgroup) leaves the default group up: rank 0's
barrier after it still waits for the other ranks, which never call it."""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    eval_group = dist.new_group(ranks=[0, 1])
    value = torch.ones(1)
    dist.all_reduce(value, group=eval_group)
    dist.destroy_process_group(eval_group)
    if rank == 0:
        torch.save(value, "value.pt")
        dist.barrier()  # expect: RC101


if __name__ == "__main__":
    main()
