"""Megatron-LM "lite" HF exporter for FSDP2-sharded models: with `rank0_only=True` the non-zero
ranks return from the state-tensor generator before its first tensor, while rank 0 goes on into
`DTensor.full_tensor()`.

Thread: https://github.com/ISEEKYAN/Megatron-LM/pull/82 ("[lite] hardening: fsdp2 rank0-only export deadlock + packed loss-mask misalignment guard")
Project: ISEEKYAN/Megatron-LM (Megatron-LM fork, lite trainer with FSDP2)
What hung: `_iter_hf_state_tensors(rank0_only=True)` had non-zero ranks return before the first
tensor, while rank 0 proceeded into `full_tensor()` -- a collective (all-gather) for FSDP2-sharded
DTensor params. Rank 0 blocked until the NCCL timeout, so any `save_hf_weights` on a multi-GPU FSDP2
run (save paths force rank0_only=True) hung the job at save time. The rollout weight-sync path was
safe only because it runs with rank0_only=False.
Fix (the PR, open, found in a code review with a counter-example regression test): when sharded
params are present, the non-zero ranks drive the same iteration (so they join every `full_tensor()`)
and simply yield nothing; plain-tensor models keep the cheap early return.
Expected rankcheck finding: RC102 on the non-zero ranks' `return`.
(The name-mapping table and safetensors writing are reconstructed.)
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
    if rank0_only and rank != 0:
        return  # expect: RC102
    for name, tensor in model.state_dict().items():
        if isinstance(tensor, DTensor):
            tensor = tensor.full_tensor()
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
