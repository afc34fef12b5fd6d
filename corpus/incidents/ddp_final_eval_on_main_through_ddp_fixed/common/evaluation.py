"""Held-out loss of a causal LM."""
import torch


@torch.no_grad()
def evaluate(model, loader, device, max_batches: int = 50) -> float:
    model.eval()
    total, count = 0.0, 0
    for i, batch in enumerate(loader):
        if i >= max_batches:
            break
        input_ids = batch["input_ids"].to(device)
        logits = model(input_ids[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), input_ids[:, 1:].flatten(), ignore_index=-100)
        total += loss.item()
        count += 1
    model.train()
    return total / max(count, 1)
