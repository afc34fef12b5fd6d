"""3D human mesh recovery under occlusion (JOTR) trained with plain DDP: a contrastive (NCE) loss
all-gathers the voxel features of every GPU's batch to use them as negatives.

Thread: https://github.com/xljh0520/JOTR/issues/4 ("NCCL Timeout Error when applying NCE Loss")
Project: xljh0520/JOTR
What hung: the reporter's copy of the dataset had missing samples, and a custom `collate_fn`
dropped them, so batches had different sizes on different GPUs. The NCE loss's `all_gather` then
got tensors of different shapes and stalled; with TORCH_DISTRIBUTED_DEBUG=DETAIL it reported
"Detected mismatch between collectives on ranks ... TensorShape=[41, 256, 8, 8, 8]" on one rank and
"[40, 256, 8, 8, 8]" on the other. Reporter's own finding.
Fix: the reporter's proposal is cut off in the stored thread; inferred: keep the batch size equal on
every GPU by having the dataset substitute another valid sample for a missing one instead of the
collate function dropping it.
Expected rankcheck finding: RC104 on the `all_gather` of features whose batch dimension differs per rank.
"""
import os
import random
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler
from torch.utils.data.dataloader import default_collate


class OcclusionMeshDataset(Dataset):
    def __init__(self, ann_file: str, img_dir: str):
        import json

        with open(ann_file) as f:
            self.annotations = json.load(f)
        self.img_dir = img_dir

    def __len__(self):
        return len(self.annotations)

    def __getitem__(self, idx):
        ann = self.annotations[idx]
        path = os.path.join(self.img_dir, ann["file_name"])
        if not os.path.exists(path):
            return None
        from jotr_io import load_crop  # project-local image/SMPL loading

        return load_crop(path, ann)


def collate_skip_missing(batch):
    batch = [sample for sample in batch if sample is not None]
    return default_collate(batch)


def gather_features(feat: torch.Tensor) -> torch.Tensor:
    gathered = [torch.zeros_like(feat) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, feat)  # expect: RC104
    gathered[dist.get_rank()] = feat
    return torch.cat(gathered, dim=0)


def nce_loss(query: torch.Tensor, key: torch.Tensor, temperature: float = 0.07) -> torch.Tensor:
    q = F.normalize(query.flatten(1), dim=1)
    k_all = F.normalize(gather_features(key).flatten(1), dim=1)
    logits = q @ k_all.t() / temperature
    offset = dist.get_rank() * q.shape[0]
    labels = torch.arange(q.shape[0], device=q.device) + offset
    return F.cross_entropy(logits, labels)


def train(args):
    dist.init_process_group("nccl", timeout=timedelta(minutes=30))
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    from jotr_model import JOTR  # project-local model

    dataset = OcclusionMeshDataset(args["ann_file"], args["img_dir"])
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=args["batch_size"], sampler=sampler, num_workers=8,
                        collate_fn=collate_skip_missing, drop_last=True)
    model = DDP(JOTR().cuda(), device_ids=[local_rank], find_unused_parameters=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=args["lr"])
    for epoch in range(args["epochs"]):
        sampler.set_epoch(epoch)
        for inputs in loader:
            inputs = {k: v.cuda(non_blocking=True) for k, v in inputs.items()}
            out = model(inputs)
            loss = out["mesh_loss"] + args["nce_weight"] * nce_loss(out["voxel_feat"], out["voxel_feat_occ"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    train({"ann_file": "data/3dpw_train.json", "img_dir": "data/3DPW/imageFiles", "batch_size": 41,
           "lr": 1e-4, "epochs": 40, "nce_weight": 0.1})
