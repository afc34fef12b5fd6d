"""The pattern of run_clm_no_trainer.py: every process waits, then the main process writes (the
unwrapped model's save_pretrained and accelerator.save are not collectives)."""
import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM, AutoTokenizer


def save_final(accelerator: Accelerator, model, tokenizer, output_dir: str) -> None:
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        unwrapped_model = accelerator.unwrap_model(model)
        unwrapped_model.save_pretrained(output_dir, save_function=accelerator.save)
        tokenizer.save_pretrained(output_dir)


def main(output_dir: str) -> None:
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained("gpt2")
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    model, optimizer = accelerator.prepare(model, optimizer)
    save_final(accelerator, model, tokenizer, output_dir)
