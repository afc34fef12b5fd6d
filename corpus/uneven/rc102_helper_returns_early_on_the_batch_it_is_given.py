"""A helper that syncs a batch statistic returns early when the batch it is given has no valid
tokens (a fully padded micro-batch on one rank): the caller's other ranks go on into the
all-reduce inside it and wait there."""
import torch
import torch.distributed as dist


def sync_token_accuracy(logits, labels):
    valid = labels != -100
    if valid.sum() == 0:
        return None  # expect: RC102
    correct = (logits.argmax(-1)[valid] == labels[valid]).float().sum().reshape(1)
    dist.all_reduce(correct)
    return correct


def score_experts(router_logits, expert_outputs):
    total = torch.zeros(1)
    for e in range(router_logits.shape[-1]):
        routed = router_logits.argmax(-1) == e
        if routed.sum() == 0:
            continue  # expect: RC103
        part = expert_outputs[routed].float().mean().reshape(1)
        dist.all_reduce(part)
        total += part
    return total


def train(model, loader, optimizer):
    for batch in loader:
        out = model(batch["input_ids"])
        loss = torch.nn.functional.cross_entropy(out.logits.flatten(0, 1), batch["labels"].flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        sync_token_accuracy(out.logits.detach(), batch["labels"])
        score_experts(out.router_logits.detach(), out.expert_outputs.detach())
