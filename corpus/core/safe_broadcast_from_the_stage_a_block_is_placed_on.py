"""Pipeline blocks record the stage they are placed on in `self.rank` (nanotron's PipelineBlock):
the first stage holding a block is the same number on every process, so the broadcast's root is
one process for the whole pipeline group, whatever the attribute is called."""
import torch.distributed as dist
from torch import nn


class PipelineBlock(nn.Module):
    def __init__(self, module_builder, module_kwargs):
        super().__init__()
        self.module_builder = module_builder
        self.module_kwargs = module_kwargs

    def build_and_set_rank(self, pp_rank: int):
        self.rank = pp_rank
        self.pp_block = self.module_builder(**self.module_kwargs)


def get_min_max_rank(module: nn.Module):
    ranks = [block.rank for block in module.modules() if isinstance(block, PipelineBlock)]
    return min(ranks), max(ranks)


def broadcast_inputs(model: nn.Module, input_ids, pp_group):
    input_stage, _ = get_min_max_rank(model)
    dist.broadcast(input_ids, src=dist.get_global_rank(pp_group, input_stage), group=pp_group)
    return input_ids
