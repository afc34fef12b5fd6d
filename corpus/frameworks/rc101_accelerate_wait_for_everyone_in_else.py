"""The main process saves while the others wait in an `else:` barrier (huggingface/accelerate#2690):
the main process never reaches a wait_for_everyone, so the waiting processes hang."""
import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM, AutoTokenizer


def save_final(accelerator: Accelerator, model, tokenizer, output_dir: str) -> None:
    if accelerator.is_main_process:
        unwrapped_model = accelerator.unwrap_model(model)
        unwrapped_model.save_pretrained(output_dir, safe_serialization=True)
        tokenizer.save_pretrained(output_dir)
    else:
        accelerator.wait_for_everyone()  # expect: RC101


def main(output_dir: str) -> None:
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained("gpt2")
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    model, optimizer = accelerator.prepare(model, optimizer)
    save_final(accelerator, model, tokenizer, output_dir)
