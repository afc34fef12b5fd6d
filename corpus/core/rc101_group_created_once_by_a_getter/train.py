import torch.distributed as dist

from dist_utils import distributed_init, fresh_gloo_group, get_data_parallel_rank, get_gloo_group


def save_checkpoint(state):
    if get_data_parallel_rank() == 0:
        print("saving", len(state))
    if dist.get_rank() == 0:
        group = get_gloo_group()
        print("gloo group", group)


def report(state):
    if dist.get_rank() == 0:
        group = fresh_gloo_group()  # expect: RC101
        print("gloo group", group)


def main():
    distributed_init()
    save_checkpoint({})
    report({})


if __name__ == "__main__":
    main()
