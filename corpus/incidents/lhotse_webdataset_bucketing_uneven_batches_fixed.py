"""Safe twin of lhotse_webdataset_bucketing_uneven_batches.py: the epoch loop runs inside
`Join([model])`, so a rank that runs out of batches early shadows the DDP gradient all-reduces
of the others until every rank has finished its share.

Thread: https://github.com/lhotse-speech/lhotse/issues/1098
"""
import argparse
import logging
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from lhotse import CutSet
from lhotse.dataset import DynamicBucketingSampler, K2SpeechRecognitionDataset, SpecAugment
from lhotse.dataset.iterable_dataset import IterableDatasetWrapper
from lhotse.dataset.webdataset import make_worker_init_fn
from torch.distributed.algorithms.join import Join
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

from model import build_conformer_ctc, compute_ctc_loss


def get_parser():
    p = argparse.ArgumentParser()
    p.add_argument("--world-size", type=int, default=4)
    p.add_argument("--master-port", type=int, default=12354)
    p.add_argument("--shards", type=Path, default=Path("data/shards/train"))
    p.add_argument("--max-duration", type=float, default=200.0)
    p.add_argument("--num-epochs", type=int, default=30)
    p.add_argument("--num-workers", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-3)
    return p


def train_dataloader(params, rank, world_size):
    shards = sorted(str(s) for s in params.shards.glob("shard-*.tar"))
    cuts = CutSet.from_webdataset(shards, split_by_worker=True, split_by_node=True, shuffle_shards=True)
    dataset = K2SpeechRecognitionDataset(cut_transforms=[], input_transforms=[SpecAugment()],
                                         return_cuts=True)
    sampler = DynamicBucketingSampler(cuts, max_duration=params.max_duration, shuffle=True,
                                      rank=0, world_size=1)
    return DataLoader(IterableDatasetWrapper(dataset=dataset, sampler=sampler), batch_size=None,
                      num_workers=params.num_workers, persistent_workers=False,
                      worker_init_fn=make_worker_init_fn(rank=rank, world_size=world_size))


def train_one_epoch(params, model, optimizer, train_dl, epoch, rank):
    model.train()
    tot_loss, tot_frames = 0.0, 0
    # Each process reads its own shards, so the batch counts differ: Join lets the processes
    # that finish first keep answering DDP's all-reduces until everyone is done.
    with Join([model]):
        for batch_idx, batch in enumerate(train_dl):
            feats = batch["inputs"].to(rank)
            supervisions = batch["supervisions"]
            nnet_out, out_lens = model(feats, supervisions)
            loss = compute_ctc_loss(nnet_out, out_lens, supervisions)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            tot_loss += loss.item()
            tot_frames += int(out_lens.sum())
            if batch_idx % 50 == 0 and rank == 0:
                logging.info(f"epoch {epoch} batch {batch_idx} loss/frame {tot_loss / max(tot_frames, 1):.4f}")
    return tot_loss, tot_frames


def run(rank, world_size, params):
    dist.init_process_group("nccl", init_method=f"tcp://localhost:{params.master_port}",
                            rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s ({rank}/{world_size}) %(message)s")
    model = DDP(build_conformer_ctc().to(rank), device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=params.lr)
    train_dl = train_dataloader(params, rank, world_size)
    for epoch in range(1, params.num_epochs + 1):
        train_one_epoch(params, model, optimizer, train_dl, epoch, rank)
        if rank == 0:
            torch.save(model.module.state_dict(), f"exp/epoch-{epoch}.pt")
    dist.destroy_process_group()


def main():
    params = get_parser().parse_args()
    mp.spawn(run, args=(params.world_size, params), nprocs=params.world_size, join=True)


if __name__ == "__main__":
    main()
