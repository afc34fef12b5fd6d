"""Megatron's own form: test membership of the embedding group, then all-reduce over exactly that
group: the ranks that call it are the group's members."""
import torch
from megatron.core import parallel_state


def allreduce_word_embedding_grads(model) -> None:
    if parallel_state.is_rank_in_embedding_group(ignore_virtual=True):
        weight = model.shared_embedding_or_output_weight()
        grad = weight.main_grad
        torch.distributed.all_reduce(grad, group=parallel_state.get_embedding_group())
