"""Embedding blocks of a text corpus with a Megatron BERT: each data-parallel replica takes its
share of the missing blocks by its rank in the data-parallel group (`process_group.rank()`, the
group given or `get_data_parallel_group()`), padded with None to the
longest share, agreed by a MAX all-reduce. Whether a
rank embeds a block then depends on its data-parallel rank only, which every member of a
tensor-parallel group shares: the group's `broadcast_data` is entered by all of its members or by
none, and the world barrier after it is reached by every rank in every round."""
import torch
from megatron.core import parallel_state, tensor_parallel


def blocks_of_this_rank(n_blocks, process_group=None):
    if process_group is None:
        process_group = parallel_state.get_data_parallel_group()
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
            embed_block(model, block)
        torch.distributed.barrier()
