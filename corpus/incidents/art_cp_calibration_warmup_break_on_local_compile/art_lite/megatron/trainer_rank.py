"""Trimmed TrainerRank: one data-parallel rank of the Megatron-backed trainer; its forward over a
packed prefix-tree layout runs the model on this CP rank's slice of the sequence and exchanges the
recurrent chunk states with the other CP ranks at every GDN layer."""
import torch
import torch.distributed as dist

from art_lite.megatron.context_parallel import exchange_chunk_states


class TrainerRank:
    def __init__(self, model, cp_group):
        self.model = model
        self.cp_group = cp_group
        self.cp_rank = dist.get_rank(cp_group)
        self.cp_size = dist.get_world_size(cp_group)

    def _local_slice(self, layout):
        return layout.token_slice(self.cp_rank, self.cp_size)

    @torch.no_grad()
    def dp_rank_forward(self, layout):
        input_ids, position_ids = self._local_slice(layout)
        hidden = self.model.embed(input_ids.cuda())
        for block in self.model.blocks:
            if block.is_gdn:
                states = block.chunk_states(hidden)
                remote = exchange_chunk_states(states, layout, self.cp_group)
                hidden = block(hidden, remote_states=remote)
            else:
                hidden = block(hidden, position_ids=position_ids.cuda())
        return self.model.head(hidden)
