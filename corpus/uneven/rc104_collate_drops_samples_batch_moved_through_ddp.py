"""The batch a dropping collate function makes is moved to the GPU field by field and run through
a DDP model: the model's output has a row per sample this rank kept, so the features all-gathered
from it have a per-rank first dimension (JOTR#4, as training loops write it)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torch.utils.data.dataloader import default_collate


def collate_skip_missing(samples):
    kept = [sample for sample in samples if sample is not None]
    return default_collate(kept)


def gather_features(feat):
    gathered = [torch.zeros_like(feat) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, feat)  # expect: RC104
    return torch.cat(gathered, dim=0)


def contrastive_loss(query, key):
    keys = gather_features(key)
    return (query @ keys.t()).logsumexp(dim=1).mean()


def train(dataset, local_rank, batch_size):
    from mesh_model import MeshNet  # project-local, not in this tree

    model = DDP(MeshNet().cuda(), device_ids=[local_rank])
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, collate_fn=collate_skip_missing, drop_last=True)
    for inputs in loader:
        inputs = {name: tensor.cuda(non_blocking=True) for name, tensor in inputs.items()}
        out = model(inputs)
        loss = out["loss"] + contrastive_loss(out["features"], out["features_occluded"])
        loss.backward()
