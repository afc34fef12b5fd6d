"""Data-parallel training of a Transformer translation model with OpenNMT-py 3.4 on several GPUs
(`onmt_train -config en_de.yaml` with `world_size: 4`, `gpu_ranks: [0, 1, 2, 3]`,
`parallel_mode: data_parallel`), after the reporter's fix of OpenNMT-py#2549: a rank whose batch
was removed after a CUDA OOM all-reduces zero gradients instead of an empty (or short) list.

Thread: https://github.com/OpenNMT/OpenNMT-py/issues/2549 ("List index out of range in
onmt.utils.distributed.all_reduce_and_rescale_tensors:51"), with the reporter's fix in
https://github.com/OpenNMT/OpenNMT-py/pull/2550 ("Fixed OOM list out of range bug", closed)
Project: OpenNMT/OpenNMT-py (onmt/trainer.py, onmt/utils/distributed.py)
Fix (the reporter's PR, first version; the PR was closed after the maintainer warned of silent
repeated OOMs): every trainable parameter contributes a gradient to the all-reduce, zeros where the
removed batch left none, so all ranks reduce buffers of the same size and the OOM rank takes part
in the same collectives as the others.
Expected rankcheck finding: none (safe twin).
(Trimmed: the config system, vocab building, transforms, validation, scoring, early stopping, the
model saver's format, the error-handler process. Inferred: the model and the data iterator, a
per-rank shard of token-bucketed batches, stand in for onmt's dynamic iterator.)
"""
import argparse
import logging

import torch
import torch.multiprocessing as mp
import torch.nn as nn

from onmt_lite import build_trainer
from onmt_lite.trainer import Optimizer
from onmt_lite.utils import multi_init

PAD = 1


class NMTModel(nn.Module):
    def __init__(self, vocab_size, d_model=512, heads=8, layers=6, ff=2048, dropout=0.1):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, d_model, padding_idx=PAD)
        self.transformer = nn.Transformer(d_model, heads, layers, layers, ff, dropout,
                                          batch_first=True)
        self.generator = nn.Linear(d_model, vocab_size)

    def forward(self, src, tgt, src_len):
        src_mask = src[:, :, 0].eq(PAD)
        tgt_causal = self.transformer.generate_square_subsequent_mask(tgt.size(1)).to(tgt.device)
        return self.transformer(self.embeddings(src[:, :, 0]), self.embeddings(tgt),
                                tgt_mask=tgt_causal, src_key_padding_mask=src_mask)


def token_batches(path, rank, world_size, batch_tokens, device):
    """Shard the corpus by line over the ranks and pack examples into token-bucketed batches,
    cycling over the shard forever (as onmt's dynamic iterator does): training ends on the step
    count, which every rank shares."""
    with open(path, encoding="utf-8") as f:
        examples = [line.split("\t") for i, line in enumerate(f) if i % world_size == rank]
    while True:
        batch, longest = [], 0
        for src, tgt in examples:
            src_ids = [int(t) for t in src.split()]
            tgt_ids = [int(t) for t in tgt.split()]
            longest = max(longest, len(src_ids), len(tgt_ids))
            if batch and longest * (len(batch) + 1) > batch_tokens:
                yield collate(batch, device)
                batch, longest = [], max(len(src_ids), len(tgt_ids))
            batch.append((src_ids, tgt_ids))


def collate(examples, device):
    src = nn.utils.rnn.pad_sequence([torch.tensor(s) for s, _ in examples], True, PAD)
    tgt = nn.utils.rnn.pad_sequence([torch.tensor(t) for _, t in examples], True, PAD)
    return {"src": src.unsqueeze(-1).to(device), "tgt": tgt.unsqueeze(-1).to(device),
            "srclen": torch.tensor([len(s) for s, _ in examples], device=device), "pad_idx": PAD}


def main(opt, device_id):
    torch.cuda.set_device(device_id)
    if opt.world_size > 1:
        multi_init(opt, device_id)
    device = torch.device("cuda", device_id)
    model = NMTModel(opt.vocab_size).to(device)
    optim = Optimizer(torch.optim.Adam(model.parameters(), lr=opt.learning_rate,
                                       betas=(0.9, 0.998)), opt.learning_rate, amp=opt.amp)
    trainer = build_trainer(opt, device_id, model, optim)
    rank = opt.gpu_ranks[device_id]
    train_iter = token_batches(opt.train, rank, opt.world_size, opt.batch_size, device)
    trainer.train(train_iter, opt.train_steps, save_checkpoint_steps=opt.save_checkpoint_steps)


def _spawned(device_id, opt):
    logging.basicConfig(level=logging.INFO)
    main(opt, device_id)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", required=True)
    parser.add_argument("--vocab_size", type=int, default=32000)
    parser.add_argument("--batch_size", type=int, default=8192, help="tokens per batch")
    parser.add_argument("--accum_count", type=int, default=2)
    parser.add_argument("--learning_rate", type=float, default=2.0)
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--train_steps", type=int, default=200000)
    parser.add_argument("--save_checkpoint_steps", type=int, default=5000)
    parser.add_argument("--report_every", type=int, default=100)
    parser.add_argument("--world_size", type=int, default=4)
    parser.add_argument("--gpu_ranks", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--parallel_mode", default="data_parallel")
    parser.add_argument("--gpu_backend", default="nccl")
    parser.add_argument("--master_ip", default="localhost")
    parser.add_argument("--master_port", type=int, default=10000)
    parser.add_argument("--timeout", type=int, default=60)
    opt = parser.parse_args()
    mp.spawn(_spawned, args=(opt,), nprocs=opt.world_size, join=True)
