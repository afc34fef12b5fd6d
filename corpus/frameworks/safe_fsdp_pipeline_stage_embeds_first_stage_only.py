"""A pipeline-parallel GPT under FSDP (each pipeline stage's layers sharded over its data-parallel
group): only the first stage embeds tokens and only the last projects to the vocabulary. The
stage tests differ between ranks, but every member of one data-parallel group sits on the same
stage, so all the ranks that shard the embedding run its forward together."""
import torch
import torch.nn as nn
from megatron.core import parallel_state
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


class StageModule(nn.Module):
    def __init__(self, vocab: int, dim: int, layers: int):
        super().__init__()
        self.pre_process = parallel_state.is_pipeline_first_stage()
        self.post_process = parallel_state.is_pipeline_last_stage()
        self.embedding = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(dim, 8, batch_first=True) for _ in range(layers)])
        self.output_layer = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids, hidden_states):
        if self.pre_process:
            hidden_states = self.embedding(input_ids)
        for block in self.blocks:
            hidden_states = block(hidden_states)
        if self.post_process:
            return self.output_layer(hidden_states)
        return hidden_states


def build(vocab: int, dim: int, layers: int):
    model = StageModule(vocab, dim, layers).cuda()
    return FSDP(model, process_group=parallel_state.get_data_parallel_group())
