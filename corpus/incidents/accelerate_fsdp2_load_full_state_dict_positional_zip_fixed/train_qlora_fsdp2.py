"""Safe twin of accelerate_fsdp2_load_full_state_dict_positional_zip: rank 0 walks the sharded
state dict's keys and looks each full tensor up by name (huggingface/accelerate#3982, merged), so
every rank issues the same broadcasts with the same shapes.
"""
import argparse
import math

import torch
from accelerate import Accelerator
from accelerate.utils import FullyShardedDataParallelPlugin
from datasets import load_dataset
from peft import LoraConfig, get_peft_model
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig, DataCollatorForLanguageModeling

from accelerate_lite.fsdp_utils import fsdp2_prepare_model


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name", default="meta-llama/Llama-3.1-8B")
    p.add_argument("--dataset", default="tatsu-lab/alpaca")
    p.add_argument("--max_length", type=int, default=1024)
    p.add_argument("--batch_size", type=int, default=2)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--lora_r", type=int, default=16)
    p.add_argument("--output_dir", default="qlora-out")
    return p.parse_args()


def build_model(args, accelerator):
    bnb = BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_compute_dtype=torch.bfloat16,
        bnb_4bit_quant_storage=torch.bfloat16,
    )
    if accelerator.is_main_process:
        model = AutoModelForCausalLM.from_pretrained(args.model_name, quantization_config=bnb, torch_dtype=torch.bfloat16)
    else:
        # cpu_ram_efficient_loading: the other ranks only need the structure
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_pretrained(args.model_name, quantization_config=bnb, torch_dtype=torch.bfloat16)
    lora = LoraConfig(r=args.lora_r, lora_alpha=2 * args.lora_r, target_modules="all-linear", task_type="CAUSAL_LM")
    return get_peft_model(model, lora)


def main():
    args = parse_args()
    fsdp_plugin = FullyShardedDataParallelPlugin(
        fsdp_version=2,
        cpu_ram_efficient_loading=True,
        auto_wrap_policy="transformer_based_wrap",
        state_dict_type="SHARDED_STATE_DICT",
    )
    accelerator = Accelerator(fsdp_plugin=fsdp_plugin, mixed_precision="bf16")
    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token

    model = build_model(args, accelerator)
    model = fsdp2_prepare_model(accelerator, model)

    raw = load_dataset(args.dataset, split="train")

    def tokenize(ex):
        return tokenizer(ex["instruction"] + "\n" + ex["output"], truncation=True, max_length=args.max_length)

    ds = raw.map(tokenize, remove_columns=raw.column_names)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True,
                        collate_fn=DataCollatorForLanguageModeling(tokenizer, mlm=False))
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr)
    optimizer, loader = accelerator.prepare(optimizer, loader)

    model.train()
    for epoch in range(args.epochs):
        for step, batch in enumerate(loader):
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            if step % 20 == 0:
                accelerator.print(f"epoch {epoch} step {step} loss {loss.item():.4f} ppl {math.exp(loss.item()):.2f}")
    accelerator.save_state(args.output_dir)


if __name__ == "__main__":
    main()
