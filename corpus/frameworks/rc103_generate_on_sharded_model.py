"""Sampling from an FSDP-wrapped model during training: each new token is a sharded forward (an
all-gather), and with `synced_gpus=False` generation stops when this rank's own sequences end, so
a rank whose prompts finish early stops gathering while the others wait. The default (True for an
FSDP-managed model since transformers 4.45) and an explicit True keep every rank stepping until
all are done; an unwrapped model's generate issues no collective."""
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from transformers import AutoModelForCausalLM


def sample(prompts, model_name="gpt2"):
    dist.init_process_group("nccl")
    model = FSDP(AutoModelForCausalLM.from_pretrained(model_name))
    out = model.generate(**prompts, max_new_tokens=64, do_sample=True, synced_gpus=False)  # expect: RC103
    return out


def sample_with_the_default(prompts, model_name="gpt2"):
    model = FSDP(AutoModelForCausalLM.from_pretrained(model_name))
    return model.generate(**prompts, max_new_tokens=64, do_sample=True)


def sample_synced(prompts, model_name="gpt2"):
    model = FSDP(AutoModelForCausalLM.from_pretrained(model_name))
    return model.generate(**prompts, max_new_tokens=64, do_sample=True, synced_gpus=True)


def sample_unwrapped(prompts, model_name="gpt2"):
    model = AutoModelForCausalLM.from_pretrained(model_name)
    with torch.no_grad():
        return model.generate(**prompts, max_new_tokens=64)
