"""Look-alike of rc101_flag_stored_through_a_second_name_for_the_options: `opts` is a copy
(`dict(options)`), so the rank-0 flag stored in it leaves `options` alike on every rank and
every rank takes the barrier together.
"""
import torch.distributed as dist


def train(options):
    dist.init_process_group("gloo")
    opts = dict(options)
    opts["writes_checkpoints"] = dist.get_rank() == 0
    if options["writes_checkpoints"]:
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    train({"writes_checkpoints": False})
