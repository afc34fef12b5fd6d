"""What trl's trainers gather of generated sequences: one number per sequence (its length, whether
it was truncated), as many as this rank has prompts, the same count on every process; the token
ids themselves are padded across processes before they are gathered. `generate` decodes each
rank's sequences to their own length, which matters only for what keeps that dimension."""
import torch
from accelerate import Accelerator


def evaluate(accelerator: Accelerator, model, eval_dataloader, tokenizer):
    model.eval()
    for batch in eval_dataloader:
        with torch.no_grad():
            generated = accelerator.unwrap_model(model).generate(batch["input_ids"], max_new_tokens=64)
        lengths = torch.tensor([len(ids) for ids in generated], device=accelerator.device)
        truncated = torch.tensor([ids[-1] != tokenizer.eos_token_id for ids in generated], device=accelerator.device)
        all_lengths = accelerator.gather(lengths)
        all_truncated = accelerator.gather(truncated)
        padded = accelerator.pad_across_processes(generated, dim=1, pad_index=tokenizer.pad_token_id)
        all_ids = accelerator.gather(padded)
        if accelerator.is_main_process:
            print(all_lengths.float().mean().item(), all_truncated.float().mean().item(), all_ids.shape)
