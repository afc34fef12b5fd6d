"""Ranking training/eval driver (trimmed from examples/hstu training scripts).

Part of the reconstruction of https://github.com/NVIDIA/recsys-examples/issues/361;
see commons/distributed/batch_allgather.py for the incident and the expected
finding. Each rank yields the same number of batches (computed from the global
dataset length), but the tail batch of a rank can be incomplete or empty, so
`actual_batch_size` differs between ranks on the last step.
"""
import argparse
import math
import os

import pandas as pd
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, IterableDataset

from commons.distributed.batch_allgather import pad_and_allgather_batch
from commons.sequence_batch.batch import HSTUBatch

FEATURES = ["item_id", "action_type"]


class HSTUSequenceDataset(IterableDataset):
    def __init__(self, path, batch_size, rank, world_size):
        self.df = pd.read_parquet(path)
        self.batch_size = batch_size
        self.rank = rank
        self.world_size = world_size
        self._num_batches = math.ceil(len(self.df) / (batch_size * world_size))

    def __len__(self):
        return self._num_batches

    def __iter__(self):
        for batch_idx in range(self._num_batches):
            start = (batch_idx * self.world_size + self.rank) * self.batch_size
            rows = self.df.iloc[start: start + self.batch_size]
            samples = [
                {"item_id": list(r.item_id), "action_type": list(r.action_type),
                 "label": float(r.label), "num_candidates": int(r.num_candidates)}
                for r in rows.itertuples()
            ]
            yield HSTUBatch.collate(samples, self.batch_size, FEATURES)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    scores, labels = [], []
    for batch in loader:
        batch = batch.to(device)
        global_batch, is_padding = pad_and_allgather_batch(batch, return_padding_flag=True)
        logits = model(global_batch)
        keep = ~is_padding
        scores.append(logits[keep].float().cpu())
        labels.append(global_batch.labels[keep].cpu())
    model.train()
    return torch.cat(scores), torch.cat(labels)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--eval_path", required=True)
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--model_ckpt", required=True)
    args = parser.parse_args()

    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    dataset = HSTUSequenceDataset(args.eval_path, args.batch_size, dist.get_rank(), dist.get_world_size())
    loader = DataLoader(dataset, batch_size=None, num_workers=2)
    model = torch.load(args.model_ckpt, map_location=device, weights_only=False)
    scores, labels = evaluate(model, loader, device)
    if dist.get_rank() == 0:
        auc_pairs = (scores.unsqueeze(0) > scores.unsqueeze(1)).float()
        print(f"eval samples={labels.numel()} positives={int(labels.sum())} pairs={auc_pairs.numel()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
