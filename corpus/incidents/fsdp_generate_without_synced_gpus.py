"""GAN-style fine-tuning of a causal LM under FSDP: every few steps each rank generates
completions for its own prompts with `model.generate` inside `summon_full_params`.

Thread: https://github.com/huggingface/transformers/issues/30228 ("FSDP Doesn't Work with model.generate()")
(fix: https://github.com/huggingface/transformers/pull/33483)
Project: huggingface/transformers with torch FSDP
What hung: "you must use `generate(synced_gpus=True)` when using differently-sized data across
ranks. Otherwise, the different ranks will pause on different synchronization points leading to a
deadlock." Each decoding step is a forward of the FSDP-managed model; a rank whose sequences hit
EOS leaves the decoding loop early while the others wait for it in the next step's all-gather.
Fix: pass `synced_gpus=True` (PR #33483 makes it the default when the model is FSDP-managed).
Expected rankcheck finding: RC103 on the `generate(...)` call, whose decoding loop runs a per-rank
number of collective steps.
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
                samples = model.generate(**enc, max_new_tokens=args.max_new_tokens, do_sample=True)  # expect: RC103
            loss = discriminator_loss(model, samples)
        else:
            loss = model(**enc, labels=enc["input_ids"]).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
