"""GPTBridge.save_weights: export a Megatron-style expert-parallel model to a Hugging Face folder.

Safe twin of swift_megatron_master_only_model_load_hits_ddp_barrier: the master-only load of the
meta ("dummy") HF model runs under `disable_safe_ddp_context_use_barrier()`, so the dynamic-module
guard it goes through uses the file lock instead of its master-side barriers (the fix of
modelscope/ms-swift#9171).
"""
import os
from copy import copy
from typing import Dict, List, Optional

import torch
import torch.distributed as dist
from safetensors.torch import save_file

from .dist_utils import disable_safe_ddp_context_use_barrier, is_master
from .model_loader import get_model_processor


class GPTBridge:
    def __init__(self, hf_config, expert_prefix: str = "experts."):
        self.hf_config = hf_config
        self.expert_prefix = expert_prefix
        self.hf_model = None

    def _local_state(self, mg_models: List[torch.nn.Module]) -> Dict[str, torch.Tensor]:
        state = {}
        for model in mg_models:
            for name, tensor in model.state_dict().items():
                state[name] = tensor.detach().to("cpu", copy=True)
        return state

    def _export_shards(self, mg_models: List[torch.nn.Module], output_dir: str, max_shard_size: int) -> None:
        """Collective: every rank contributes its experts, the master writes the shards."""
        local = self._local_state(mg_models)
        experts = {k: v for k, v in local.items() if k.startswith(self.expert_prefix)}
        gathered: List[Optional[Dict[str, torch.Tensor]]] = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, experts)
        if not is_master():
            return
        full = {k: v for k, v in local.items() if not k.startswith(self.expert_prefix)}
        for rank_experts in gathered:
            full.update(rank_experts)
        os.makedirs(output_dir, exist_ok=True)
        shard, size, index = {}, 0, 0
        for name in sorted(full):
            tensor = full[name].contiguous()
            shard[name] = tensor
            size += tensor.numel() * tensor.element_size()
            if size >= max_shard_size:
                save_file(shard, os.path.join(output_dir, f"model-{index:05d}.safetensors"))
                shard, size, index = {}, 0, index + 1
        if shard:
            save_file(shard, os.path.join(output_dir, f"model-{index:05d}.safetensors"))

    def save_weights(self, mg_models, output_dir: str, max_shard_size: int = 5 * 2**30, args=None, processor=None):
        self._export_shards(mg_models, output_dir, max_shard_size)
        if processor is None or args is None:
            return
        hf_config = copy(self.hf_config)
        if is_master() and self.hf_model is None:
            with torch.device("meta"), disable_safe_ddp_context_use_barrier():
                self.hf_model = get_model_processor(args.model_dir, model_type=args.model_type, return_dummy_model=True)[0]

        if is_master():
            hf_config.torch_dtype = args.torch_dtype
            hf_config.save_pretrained(output_dir)
            processor.save_pretrained(output_dir)
            generation_config = getattr(self.hf_model, "generation_config", None)
            if generation_config is not None:
                generation_config.save_pretrained(output_dir)
            print(f"Successfully saved `safetensors` model weights in `{output_dir}`.")
        dist.barrier()  # Ensure all weights are saved completely
