"""A sampling helper takes an optional `generator=` and passes it on to `torch.multinomial`; the
training loop never gives it one, so every draw comes from the process's own stream, which differs
between ranks. The loop all-gathers a sample for logging only when its draw picked the end token,
so the ranks that drew it wait in the gather for the ranks that did not."""
import torch
import torch.distributed as dist


def sample(logits, temperature=1.0, generator=None):
    probs = torch.softmax(logits / temperature, dim=-1)
    return torch.multinomial(probs, num_samples=1, generator=generator)


def train(model, loader, eos_id):
    for batch in loader:
        logits = model(batch)
        token = sample(logits[-1])
        if token.item() == eos_id:
            gathered = [torch.zeros_like(token) for _ in range(dist.get_world_size())]
            dist.all_gather(gathered, token)  # expect: RC101
        logits.mean().backward()
