"""Contrastive (SimCLR-style) pre-training of a speech encoder with DDP. Frame-level features of
the two augmented views are all-gathered across GPUs with the lightning-bolts `SyncFunction`
so that every process sees the negatives of the whole global batch.

Thread: https://github.com/pytorch/pytorch/issues/70985 ("Gather tensor in different gpu");
the same reporter's question on the SimCLR SyncFunction: Lightning-Universe/lightning-bolts#791
("torch.ones((5,8,10)) #GPU1 / torch.ones((5,6,10)) #GPU2 ... This is very common on
speech-related tasks").
Project: pytorch/pytorch
What failed: the collate function pads each batch to its own longest utterance, so the
features are (B, T_rank, D) with a frame count T that differs per process. `SyncFunction`
allocates the receive buffers with `torch.zeros_like(tensor)` (this process's T) and calls
`dist.all_gather`, which needs the same shape on every process: the reporter got "All tensor
operands to scatter/gather must have the same number of elements"; under NCCL the mismatched
all-gather hangs or returns garbage.
Fix (the reporter's own, in the thread): all-gather the lengths first (a size-1 tensor), pad
the local tensor to the maximum length, all-gather the padded tensors, then cut each one back to
its length.
Expected rankcheck finding: RC104 on the all_gather of the per-process-shaped features.
Inferred: the encoder, the augmentation and the loss around the SyncFunction.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from speech_ssl import SpeechEncoder, UtteranceDataset, augment


class SyncFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor):
        ctx.batch_size = tensor.shape[0]
        gathered_tensor = [torch.zeros_like(tensor) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered_tensor, tensor)  # expect: RC104
        return torch.cat(gathered_tensor, 0)

    @staticmethod
    def backward(ctx, grad_output):
        grad_input = grad_output.clone()
        dist.all_reduce(grad_input, op=dist.ReduceOp.SUM)
        rank = dist.get_rank()
        return grad_input[rank * ctx.batch_size:(rank + 1) * ctx.batch_size]


def collate(batch):
    feats = [b["fbank"] for b in batch]  # each (T_i, 80)
    return pad_sequence(feats, batch_first=True)  # (B, max T in this batch, 80)


def nt_xent(z1, z2, temperature):
    z1 = F.normalize(z1.flatten(1), dim=-1)
    z2 = F.normalize(z2.flatten(1), dim=-1)
    logits = z1 @ z2.t() / temperature
    labels = torch.arange(z1.shape[0], device=z1.device)
    return F.cross_entropy(logits, labels)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--manifest", default="data/train.tsv")
    p.add_argument("--batch_size", type=int, default=32)
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--temperature", type=float, default=0.1)
    args = p.parse_args()

    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    dataset = UtteranceDataset(args.manifest)
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, collate_fn=collate,
                        num_workers=4, drop_last=True)
    model = DDP(SpeechEncoder(n_mels=80, dim=256).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for feats in loader:
            feats = feats.to(device)
            z1 = model(augment(feats))  # (B, T, D): T is this batch's longest utterance
            z2 = model(augment(feats))
            z1_all = SyncFunction.apply(z1)
            z2_all = SyncFunction.apply(z2)
            loss = nt_xent(z1_all, z2_all, args.temperature)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
