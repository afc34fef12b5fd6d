"""Loading a causal LM inside `accelerator.main_process_first()` while accelerate runs DeepSpeed
ZeRO-3 (zero3_init_flag): the main process loads first, the others wait.

Thread: https://github.com/huggingface/accelerate/issues/3709
Project: huggingface/accelerate
What hung: under ZeRO-3 `from_pretrained` builds the model inside `deepspeed.zero.Init`, which
partitions every parameter with collectives across all ranks. `main_process_first` makes the
non-main processes wait in a barrier while the main process runs the body, so the main process's
partitioning collectives meet the others' barrier (and later the others' collectives meet the main
process's closing barrier): the body runs a collective sequence that is only safe when every rank
runs it at the same time. "You will never see this print."
Fix (the reporter's, in the issue): "Removing `accelerator.main_process_first` will solve the
problem" -- every process builds the ZeRO-3 model at the same time.
Expected rankcheck finding: RC106 on the `main_process_first()` block, whose two orders (main:
body then barrier, others: barrier then body) issue the collectives of `from_pretrained` in
different positions.
"""
import argparse

import torch
from accelerate import Accelerator, DeepSpeedPlugin
from transformers import AutoModelForCausalLM, AutoTokenizer


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="Qwen/Qwen2.5-0.5B-Instruct")
    parser.add_argument("--lr", type=float, default=1e-5)
    return parser.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(zero_stage=3, zero3_init_flag=True))

    with accelerator.main_process_first():  # expect: RC106
        tokenizer = AutoTokenizer.from_pretrained(args.model)
        model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16)

    print(f"Model loaded on {accelerator.device}")
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model, optimizer = accelerator.prepare(model, optimizer)
    return model, tokenizer, optimizer


if __name__ == "__main__":
    main()
