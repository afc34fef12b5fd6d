"""The run_summarization_no_trainer.py order: every process pads and gathers; process 0 decodes."""
import torch
from accelerate import Accelerator


def evaluate(accelerator: Accelerator, model, dataloader, tokenizer):
    decoded = []
    for batch in dataloader:
        with torch.no_grad():
            generated = accelerator.unwrap_model(model).generate(batch["input_ids"], max_new_tokens=32)
        generated = accelerator.pad_across_processes(generated, dim=1, pad_index=tokenizer.pad_token_id)
        generated = accelerator.gather_for_metrics(generated)
        if accelerator.process_index == 0:
            decoded.extend(tokenizer.batch_decode(generated, skip_special_tokens=True))
    return decoded


def main(model, dataloader, tokenizer):
    accelerator = Accelerator()
    model, dataloader = accelerator.prepare(model, dataloader)
    return evaluate(accelerator, model, dataloader, tokenizer)
