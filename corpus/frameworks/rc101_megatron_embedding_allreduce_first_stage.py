"""Tied embeddings across pipeline stages: the embedding-gradient all-reduce runs over the embedding
group, which holds the first AND the last stage, but it is guarded by is_pipeline_first_stage(), so
the last stage never joins."""
import torch
from megatron.core import parallel_state


def allreduce_word_embedding_grads(model) -> None:
    if parallel_state.is_pipeline_first_stage(ignore_virtual=True):
        weight = model.shared_embedding_or_output_weight()
        grad = weight.main_grad
        torch.distributed.all_reduce(grad, group=parallel_state.get_embedding_group())  # expect: RC101
