"""The same ZeRO-3 rollout, written as DeepSpeed-Chat and the OPSD fix write it: every rank keeps
stepping (`synced_gpus` given, as a constant or as the ZeRO-3 setting), or every rank decodes
max_new_tokens steps (`eos_token_id=None`), and the probe forward runs on every rank."""
import deepspeed
import torch
import torch.distributed as dist


def build(model, config):
    engine, _, _, _ = deepspeed.initialize(model=model, config=config)
    return engine


def rollout(engine, prompts, mask, max_new_tokens, z3_enabled):
    with torch.no_grad():
        synced = engine.module.generate(input_ids=prompts, attention_mask=mask, max_new_tokens=max_new_tokens, synced_gpus=True)
        chat = engine.module.generate(input_ids=prompts, attention_mask=mask, max_new_tokens=max_new_tokens, synced_gpus=z3_enabled)
        fixed = engine.module.generate(input_ids=prompts, attention_mask=mask, max_new_tokens=max_new_tokens, eos_token_id=None)
    return synced, chat, fixed


def probe(engine, batch):
    out = engine.module(batch)
    if dist.get_rank() == 0:
        print(out.shape)
    return out


def main(model, config, prompts, mask):
    engine = build(model, config)
    out = rollout(engine, prompts, mask, 256, True)
    probe(engine, prompts)
    return out
