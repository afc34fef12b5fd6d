"""Multi-task text classifier trained with the DeepSpeed engine (launched with
`deepspeed train_multitask.py --deepspeed --deepspeed_config ds_config.json`): a main label for
every example and an auxiliary label (-1 when absent) that only part of the corpus carries."""
import argparse
import json
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

import deepspeed_light


class JsonlExamples(Dataset):
    def __init__(self, path, max_len=128):
        with open(path) as f:
            self.rows = [json.loads(line) for line in f]
        self.max_len = max_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx):
        row = self.rows[idx]
        ids = row["input_ids"][: self.max_len]
        ids = ids + [0] * (self.max_len - len(ids))
        return (torch.tensor(ids), torch.tensor(row["label"]), torch.tensor(row.get("aux_label", -1)))


class MultiTaskClassifier(nn.Module):
    def __init__(self, vocab_size, hidden, num_labels, num_aux_labels, aux_weight=0.3):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden, padding_idx=0)
        layer = nn.TransformerEncoderLayer(hidden, nhead=8, dim_feedforward=4 * hidden, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=4)
        self.cls_head = nn.Linear(hidden, num_labels)
        self.aux_head = nn.Linear(hidden, num_aux_labels)
        self.aux_weight = aux_weight
        self.ce = nn.CrossEntropyLoss()

    def forward(self, input_ids, labels, aux_labels):
        h = self.encoder(self.embed(input_ids), src_key_padding_mask=input_ids.eq(0)).mean(dim=1)
        loss = self.ce(self.cls_head(h), labels)
        has_aux = aux_labels.ge(0)
        if has_aux.any():
            # the auxiliary head only sees batches that carry auxiliary labels
            loss = loss + self.aux_weight * self.ce(self.aux_head(h[has_aux]), aux_labels[has_aux])
        return loss


def get_args():
    parser = argparse.ArgumentParser(description="multi-task classifier")
    parser.add_argument("--train_file", required=True)
    parser.add_argument("--vocab_size", type=int, default=30522)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--num_labels", type=int, default=4)
    parser.add_argument("--num_aux_labels", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--micro_batch_size", type=int, default=16)
    parser.add_argument("--output_dir", default="out")
    parser = deepspeed_light.add_config_arguments(parser)
    return parser.parse_args()


def main():
    args = get_args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend="nccl")

    model = MultiTaskClassifier(args.vocab_size, args.hidden, args.num_labels, args.num_aux_labels)
    engine, optimizer = deepspeed_light.initialize(args=args, model=model, model_parameters=model.parameters())

    dataset = JsonlExamples(args.train_file)
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.micro_batch_size, sampler=sampler, drop_last=True)
    device = torch.device("cuda", args.local_rank)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for step, (input_ids, labels, aux_labels) in enumerate(loader):
            loss = engine(input_ids.to(device), labels.to(device), aux_labels.to(device))
            engine.backward(loss)
            engine.step()
            if dist.get_rank() == 0 and step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")

    if dist.get_rank() == 0:
        os.makedirs(args.output_dir, exist_ok=True)
        torch.save(engine.module.state_dict(), os.path.join(args.output_dir, "model.pt"))


if __name__ == "__main__":
    main()
