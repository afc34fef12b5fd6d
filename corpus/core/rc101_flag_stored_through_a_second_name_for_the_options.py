"""The options dict is filled through a second name for it (`opts = options`); the rank-0 flag
stored through `opts` is the one `options` holds, so the barrier under it runs on rank 0 only.
"""
import torch.distributed as dist


def train(options):
    dist.init_process_group("gloo")
    opts = options
    opts["writes_checkpoints"] = dist.get_rank() == 0
    if options["writes_checkpoints"]:
        dist.barrier()  # expect: RC101
    dist.destroy_process_group()


if __name__ == "__main__":
    train({"writes_checkpoints": False})
