"""Safe twin of fairseq_train_loop_skips_padded_empty_batch: the epoch loop hands every group,
padding batches included, to `Trainer.train_step`, which runs an empty entry as the dummy batch
with `ignore_grad`, so every worker issues the same DDP backward and the same `all_gather_list`
(facebookresearch/fairseq 0a96d22 "Fix multi-gpu training (fixes #1088)", pull request #1089).
"""
import argparse
import collections

import torch

from fairseq_lite import distributed_utils
from fairseq_lite.data import iterators
from fairseq_lite.setup import build_language_model
from fairseq_lite.tasks.fairseq_task import FairseqTask
from fairseq_lite.trainer import Trainer


def train(args, trainer, task, epoch_itr):
    """Train the model for one epoch."""
    update_freq = args.update_freq[epoch_itr.epoch - 1] \
        if epoch_itr.epoch <= len(args.update_freq) else args.update_freq[-1]
    itr = epoch_itr.next_epoch_itr(shuffle=(epoch_itr.epoch >= args.curriculum))
    itr = iterators.GroupedIterator(itr, update_freq)

    stats = collections.OrderedDict()
    for i, samples in enumerate(itr, start=epoch_itr.iterations_in_epoch):
        log_output = trainer.train_step(samples)
        if log_output is None:
            continue

        for k in ("loss", "ntokens", "nsentences"):
            if k in log_output:
                stats[k] = log_output[k]
        if distributed_utils.is_master(args) and i % args.log_interval == 0:
            print("| epoch {:03d} | {} | num_updates {}".format(
                epoch_itr.epoch, dict(stats), trainer.get_num_updates()))

        if trainer.get_num_updates() >= args.max_update:
            break


def main(args, task, model, criterion, optimizer, epoch_itr):
    trainer = Trainer(args, task, model, criterion, optimizer)
    while epoch_itr.epoch < args.max_epoch and trainer.get_num_updates() < args.max_update:
        train(args, trainer, task, epoch_itr)


def distributed_main(i, args, build_fn):
    args.device_id = i
    args.distributed_rank = args.distributed_rank * torch.cuda.device_count() + i
    torch.cuda.set_device(args.device_id)
    distributed_utils.distributed_init(args)
    task = FairseqTask(args)
    model, criterion, optimizer, dataset, collate_fn, batch_sampler = build_fn(args)
    epoch_itr = iterators.EpochBatchIterator(
        dataset, collate_fn, batch_sampler, seed=args.seed,
        num_shards=args.distributed_world_size, shard_id=args.distributed_rank)
    main(args, task, model, criterion, optimizer, epoch_itr)


def cli_main(build_fn):
    parser = argparse.ArgumentParser()
    parser.add_argument("--distributed-world-size", type=int, default=torch.cuda.device_count())
    parser.add_argument("--distributed-rank", type=int, default=0)
    parser.add_argument("--distributed-backend", default="nccl")
    parser.add_argument("--distributed-init-method", default="tcp://localhost:13579")
    parser.add_argument("--update-freq", type=lambda s: [int(x) for x in s.split(",")], default=[1])
    parser.add_argument("--curriculum", type=int, default=0)
    parser.add_argument("--max-epoch", type=int, default=10)
    parser.add_argument("--max-update", type=int, default=10 ** 9)
    parser.add_argument("--clip-norm", type=float, default=25.0)
    parser.add_argument("--bucket-cap-mb", type=int, default=25)
    parser.add_argument("--log-interval", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data", required=True)
    parser.add_argument("--vocab-size", type=int, default=32000)
    parser.add_argument("--tokens-per-sample", type=int, default=512)
    parser.add_argument("--max-sentences", type=int, default=8)
    parser.add_argument("--lr", type=float, default=5e-4)
    args = parser.parse_args()
    torch.multiprocessing.spawn(fn=distributed_main, args=(args, build_fn),
                                nprocs=args.distributed_world_size)


if __name__ == "__main__":
    cli_main(build_language_model)
