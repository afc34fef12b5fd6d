"""A mixed image/text batch on each rank: whether a sample is an image is this rank's data, sample
by sample, so the vision statistics all-reduced only for image samples are reduced a different
number of times on each rank."""
import torch
import torch.distributed as dist


def log_vision_stats(batch, vision_norms):
    for sample in batch:
        if sample["modality"] == "image":
            dist.all_reduce(vision_norms)  # expect: RC101
    return vision_norms


def train_step(model, batch, optimizer):
    loss = model(batch).mean()
    loss.backward()
    optimizer.step()
    log_vision_stats(batch, torch.zeros(1))
