"""Safe twin of fsdp_generate_without_synced_gpus.py: `generate(..., synced_gpus=True)` keeps every
rank stepping the FSDP forward until all ranks have finished decoding.

Thread: https://github.com/huggingface/transformers/issues/30228 (fix in huggingface/transformers#33483)
"""
import argparse
import functools

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.models.gpt2.modeling_gpt2 import GPT2Block


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="gpt2")
    parser.add_argument("--sample_every", type=int, default=50)
    parser.add_argument("--max_new_tokens", type=int, default=64)
    return parser.parse_args()


def main(prompt_loader, discriminator_loss):
    args = parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(args.model)
    model = FSDP(
        model,
        auto_wrap_policy=functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={GPT2Block}),
        device_id=torch.cuda.current_device(),
        use_orig_params=True,
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)

    for step, prompts in enumerate(prompt_loader):
        enc = tokenizer(prompts, return_tensors="pt", padding=True).to(torch.cuda.current_device())
        if step % args.sample_every == 0:
            with FSDP.summon_full_params(model, writeback=False, recurse=False):
                samples = model.generate(**enc, max_new_tokens=args.max_new_tokens, do_sample=True, synced_gpus=True)
            loss = discriminator_loss(model, samples)
        else:
            loss = model(**enc, labels=enc["input_ids"]).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
