"""Safe twin of ddp_speech_contrastive_sync_all_gather_variable_frames.py: SyncFunction first
all-gathers the local frame counts, pads the local features to the longest one, all-gathers the
equal-shaped padded tensors and cuts each back to its own length (the reporter's fix); the
contrastive loss then works on frame-pooled embeddings.

Thread: https://github.com/pytorch/pytorch/issues/70985
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
        world_size = dist.get_world_size()
        ctx.batch_size = tensor.shape[0]
        ctx.length = tensor.shape[1]
        local_len = torch.tensor([tensor.shape[1]], device=tensor.device)
        lengths = [torch.zeros_like(local_len) for _ in range(world_size)]
        dist.all_gather(lengths, local_len)
        lengths = [int(l.item()) for l in lengths]
        max_len = max(lengths)
        ctx.max_len = max_len
        padded = F.pad(tensor, (0, 0, 0, max_len - tensor.shape[1]))  # (B, max_len, D) everywhere
        gathered = [torch.zeros_like(padded) for _ in range(world_size)]
        dist.all_gather(gathered, padded)
        pooled = [g[:, :n].mean(dim=1) for g, n in zip(gathered, lengths)]  # drop the padding
        return torch.cat(pooled, 0)

    @staticmethod
    def backward(ctx, grad_output):
        grad_input = grad_output.clone()
        dist.all_reduce(grad_input, op=dist.ReduceOp.SUM)
        rank = dist.get_rank()
        g = grad_input[rank * ctx.batch_size:(rank + 1) * ctx.batch_size]  # (B, D)
        return (g / ctx.length).unsqueeze(1).expand(-1, ctx.length, -1).contiguous()


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
