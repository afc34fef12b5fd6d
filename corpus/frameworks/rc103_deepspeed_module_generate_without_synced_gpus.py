"""A PPO rollout on a ZeRO-3 actor built with `deepspeed.initialize` directly: the actor samples
with the wrapped model's own `generate`. Every decode step's forward all-gathers the partitioned
parameters, and without `synced_gpus=True` a rank stops as soon as its own sequences end, while the
others wait in the next step's all-gather (transformers only turns the flag on under its own
DeepSpeed integration). The evaluation forward on rank 0 alone all-gathers too."""
import deepspeed
import torch
import torch.distributed as dist


def build(model, config):
    engine, _, _, _ = deepspeed.initialize(model=model, config=config)
    return engine


def rollout(engine, prompts, mask, max_new_tokens, eos_id):
    with torch.no_grad():
        return engine.module.generate(input_ids=prompts, attention_mask=mask, max_new_tokens=max_new_tokens, do_sample=True, eos_token_id=eos_id)  # expect: RC103


def probe(engine, batch):
    if dist.get_rank() == 0:
        return engine.module(batch)  # expect: RC101
    return None


def main(model, config, prompts, mask):
    engine = build(model, config)
    out = rollout(engine, prompts, mask, 256, 2)
    probe(engine, prompts)
    return out
