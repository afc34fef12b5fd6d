"""GPTBridge.save_weights: export a Megatron-style expert-parallel model to a Hugging Face folder.

Thread: https://github.com/modelscope/ms-swift/pull/9171 ("[bugfix] fix megatron minimax save
hang", merged); the symptom is the one reported in modelscope/ms-swift#9082 and #9188 (MiniMax
M2.x trained with `megatron sft --save_safetensors true`: the safetensors shards are written, then
rank 0 hangs while writing config.json / tokenizer files and the job never finishes).
Project: modelscope/ms-swift (Megatron-SWIFT, the patched `GPTBridge.save_weights` in
swift/megatron/init.py).
What hung: every rank calls `save_weights`; after the shard export, rank 0 alone builds a meta
("dummy") copy of the HF model to write the config (`if is_master() and not hasattr(self,
'hf_model')`). For a model with remote code (MiniMax) that load goes through the dynamic-module
loader, which ms-swift wraps in `safe_ddp_context` -- a "master first" guard whose master side
ends with `dist.barrier()` twice. Only rank 0 is inside it, so its barriers pair with the final
`dist.barrier()` the other ranks already wait in, and rank 0 then waits alone in the second one
while the others have left `save_weights` (and, at the end of training, the process).
Fix (PR #9171, merged): build the dummy model under `disable_safe_ddp_context_use_barrier()` so the
master-only load falls back to the file lock and issues no barrier; the export under
swift/megatron/pipelines/export already did the same.
Expected rankcheck finding: RC101 on the `get_model_processor(...)` call under `if is_master()`,
which reaches `dist.barrier()` in swiftlite/dist_utils.py through swiftlite/model_loader.py.
Inferred: the PR has no description; the path from `get_model_processor` to the barrier is read
from the code at the PR's parent (there the guard wraps transformers' `get_cached_module_file`
through a monkeypatch; here it wraps the `AutoConfig.from_pretrained(..., trust_remote_code=True)`
call directly). The Megatron TP/EP export is reduced to an all-gather of each rank's local experts,
and the PEFT / FP8 / MTP branches of the config writing are left out.
"""
import os
from copy import copy
from typing import Dict, List, Optional

import torch
import torch.distributed as dist
from safetensors.torch import save_file

from .dist_utils import is_master
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
            with torch.device("meta"):
                self.hf_model = get_model_processor(args.model_dir, model_type=args.model_type, return_dummy_model=True)[0]  # expect: RC101

        if is_master():
            hf_config.torch_dtype = args.torch_dtype
            hf_config.save_pretrained(output_dir)
            processor.save_pretrained(output_dir)
            generation_config = getattr(self.hf_model, "generation_config", None)
            if generation_config is not None:
                generation_config.save_pretrained(output_dir)
            print(f"Successfully saved `safetensors` model weights in `{output_dir}`.")
        dist.barrier()  # Ensure all weights are saved completely
