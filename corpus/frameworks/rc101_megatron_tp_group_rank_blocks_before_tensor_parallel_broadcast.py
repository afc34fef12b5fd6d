"""The look-alike: the blocks are shared out by the rank in the tensor-parallel group instead
(`process_group.rank()` of `get_tensor_model_parallel_group()`). The members of one tensor-
parallel group now get different shares, so only some of them embed a block and enter the
group's `broadcast_data`; the others go on to the barrier."""
import torch
from megatron.core import parallel_state, tensor_parallel


def blocks_of_this_rank(n_blocks, process_group=None):
    if process_group is None:
        process_group = parallel_state.get_tensor_model_parallel_group()
    blocks = list(range(n_blocks))
    mine = blocks[process_group.rank():n_blocks:process_group.size()]
    longest = torch.tensor([len(mine)])
    torch.distributed.all_reduce(longest, op=torch.distributed.ReduceOp.MAX)
    return mine + [None] * (int(longest.item()) - len(mine))


def embed_block(model, block):
    keys = ["text", "padding_mask"]
    data = {"text": torch.zeros(8, 512, dtype=torch.long), "padding_mask": torch.ones(8, 512, dtype=torch.long)}
    batch = tensor_parallel.broadcast_data(keys, data, torch.long)
    return model(batch["text"], batch["padding_mask"])


def embed_corpus(model, n_blocks):
    for block in blocks_of_this_rank(n_blocks):
        if block is not None:
            embed_block(model, block)  # expect: RC101
        torch.distributed.barrier()
