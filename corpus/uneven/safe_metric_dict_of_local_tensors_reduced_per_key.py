"""Loss statistics kept per sample in a dict written with its keys (each value as long as this
rank's batch), reduced to one token-weighted number per key and all-reduced in one tensor, keys
sorted: every rank has the same keys, so the loop and the tensor are alike, whatever each rank's
batch size."""
import torch
import torch.distributed as dist


def create_loss_stats(num_samples, record_entropy):
    stats = {"loss/policy": torch.zeros(num_samples), "val/ratio": torch.zeros(num_samples)}
    if record_entropy:
        stats["policy/entropy"] = torch.zeros(num_samples)
    return stats


def metrics_from_stats(stats, token_counts):
    weights = token_counts / token_counts.sum()
    return {key: (values * weights).sum().item() for key, values in stats.items()}


def train_batch(batch, record_entropy, dp_group):
    num_samples = len(batch["query_responses"])
    stats = create_loss_stats(num_samples, record_entropy)
    token_counts = torch.tensor([mask.sum().float() for mask in batch["response_masks"]])
    for name, values in stats.items():
        dist.all_reduce(values.sum(), group=dp_group)
    local = metrics_from_stats(stats, token_counts)
    keys = sorted(local.keys())
    tensor = torch.tensor([token_counts.sum().item()] + [local[k] for k in keys])
    dist.all_reduce(tensor, group=dp_group)
