"""Safe twin of fsdp2_hf_export_rank0_only_early_return: with sharded params the non-zero ranks walk
the same state dict (joining every `full_tensor()`) and yield nothing (the PR's fix).

Thread: https://github.com/ISEEKYAN/Megatron-LM/pull/82
"""
import os

import torch
import torch.distributed as dist
from safetensors.torch import save_file
from torch.distributed.tensor import DTensor

QWEN2_NAME_MAP = {
    "embedding.word_embeddings.weight": "model.embed_tokens.weight",
    "output_layer.weight": "lm_head.weight",
    "decoder.final_layernorm.weight": "model.norm.weight",
}


def _to_hf_name(name: str) -> str:
    name = name.removeprefix("module.")
    if name in QWEN2_NAME_MAP:
        return QWEN2_NAME_MAP[name]
    return "model." + name.replace("decoder.layers.", "layers.").replace("self_attention.", "self_attn.")


def _iter_hf_state_tensors(model: torch.nn.Module, rank0_only: bool = False):
    rank = dist.get_rank() if dist.is_initialized() else 0
    state = model.state_dict()
    sharded = any(isinstance(t, DTensor) for t in state.values())
    if rank0_only and rank != 0 and not sharded:
        return
    for name, tensor in state.items():
        if isinstance(tensor, DTensor):
            tensor = tensor.full_tensor()
        if rank0_only and rank != 0:
            continue
        yield _to_hf_name(name), tensor.detach().to("cpu", copy=True)


def save_hf_weights(model: torch.nn.Module, out_dir: str, max_shard_bytes: int = 4 << 30) -> None:
    os.makedirs(out_dir, exist_ok=True)
    shard, shard_bytes, index = {}, 0, 0
    for hf_name, tensor in _iter_hf_state_tensors(model, rank0_only=True):
        shard[hf_name] = tensor
        shard_bytes += tensor.numel() * tensor.element_size()
        if shard_bytes >= max_shard_bytes:
            save_file(shard, os.path.join(out_dir, f"model-{index:05d}.safetensors"))
            shard, shard_bytes, index = {}, 0, index + 1
    if shard:
        save_file(shard, os.path.join(out_dir, f"model-{index:05d}.safetensors"))
    if dist.is_initialized():
        dist.barrier()


def sync_rollout_weights(model: torch.nn.Module, rollout_engine) -> None:
    # every rank consumes the generator here, so this path never hung
    rollout_engine.update_weights(_iter_hf_state_tensors(model, rank0_only=False))
