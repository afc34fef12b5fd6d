"""Safe twin of accelerate_main_process_first_zero3_load.py: the `main_process_first()` wrapper is
removed, so all processes build the ZeRO-3 model (and run its partitioning collectives) together.

Thread: https://github.com/huggingface/accelerate/issues/3709
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

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16)

    print(f"Model loaded on {accelerator.device}")
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model, optimizer = accelerator.prepare(model, optimizer)
    return model, tokenizer, optimizer


if __name__ == "__main__":
    main()
