"""Fixed twin of ddp_jotr_nce_all_gather_after_collate_drops_missing: missing samples are replaced
in the dataset, so every GPU's batch (and all_gather input) has the same size.
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
        while not os.path.exists(path):
            # substitute another sample so every GPU keeps a full batch
            ann = self.annotations[random.randrange(len(self.annotations))]
            path = os.path.join(self.img_dir, ann["file_name"])
        from jotr_io import load_crop  # project-local image/SMPL loading

        return load_crop(path, ann)


def gather_features(feat: torch.Tensor) -> torch.Tensor:
    gathered = [torch.zeros_like(feat) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, feat)
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
                        collate_fn=default_collate, drop_last=True)
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
