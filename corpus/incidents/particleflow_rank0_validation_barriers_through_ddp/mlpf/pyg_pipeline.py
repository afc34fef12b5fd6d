"""
Developing a PyTorch Geometric supervised training of MLPF using DistributedDataParallel
(mlpf/pyg_pipeline.py, trimmed to the training path). One process per GPU is spawned with
torch.multiprocessing; `rank` is the GPU index (or "cpu" when no GPU is requested).
"""
import argparse
import logging
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import yaml
from pyg.logger import _logger
from pyg.mlpf import MLPF
from pyg.training import train_mlpf
from pyg.utils import CLASS_LABELS, X_FEATURES, InterleavedIterator, PFDataset, save_mlpf

logging.basicConfig(level=logging.INFO)

parser = argparse.ArgumentParser()
parser.add_argument("--config", type=str, default="parameters/pyg-config.yaml", help="yaml config")
parser.add_argument("--model-prefix", type=str, default="experiments/MLPF_model", help="directory to hold the model")
parser.add_argument("--data_dir", type=str, default="/pfvol/tensorflow_datasets/", help="path to `tensorflow_datasets/`")
parser.add_argument("--gpus", type=str, default="0", help="to use CPU set to empty string; else e.g., `0,1`")
parser.add_argument("--dataset", type=str, choices=["clic", "cms", "delphes"], required=True, help="which dataset?")
parser.add_argument("--num-epochs", type=int, default=3, help="number of training epochs")
parser.add_argument("--lr", type=float, default=1e-4, help="learning rate")
parser.add_argument("--conv-type", type=str, default="gravnet", help="choices are ['gnn-lsh', 'gravnet', 'attention']")


def run(rank, world_size, args):
    """Passed to each gpu if (world_size > 1) else run normally on the given device."""
    if world_size > 1:
        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = "12355"
        dist.init_process_group("nccl", rank=rank, world_size=world_size)

    with open(args.config, "r") as stream:
        config = yaml.safe_load(stream)

    model_kwargs = {
        "input_dim": len(X_FEATURES[args.dataset]),
        "num_classes": len(CLASS_LABELS[args.dataset]),
        **config["model"][args.conv_type],
    }
    model = MLPF(**model_kwargs)
    save_mlpf(args, model, model_kwargs)
    model.to(rank)

    if world_size > 1:
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])

    train_loaders, valid_loaders = [], []
    for sample in config["train_dataset"][args.dataset]:
        version = config["train_dataset"][args.dataset][sample]["version"]
        batch_size = config["train_dataset"][args.dataset][sample]["batch_size"]
        ds = PFDataset(args.data_dir, f"{sample}:{version}", "train", ["X", "ygen"])
        train_loaders.append(ds.get_loader(batch_size=batch_size, world_size=world_size))
        if (rank == 0) or (rank == "cpu"):  # validation only on a single machine
            ds = PFDataset(args.data_dir, f"{sample}:{version}", "test", ["X", "ygen", "ycand"])
            valid_loaders.append(ds.get_loader(batch_size=batch_size, world_size=1))

    train_loader = InterleavedIterator(train_loaders)
    valid_loader = InterleavedIterator(valid_loaders) if (rank == 0) or (rank == "cpu") else None

    train_mlpf(rank, world_size, model, train_loader, valid_loader, args.num_epochs, args.lr, args.model_prefix)

    if (world_size > 1) and (rank != "cpu"):
        dist.destroy_process_group()


def main():
    args = parser.parse_args()
    world_size = len(args.gpus.split(",")) if args.gpus else 1
    if args.gpus and world_size > 1 and torch.cuda.device_count() > 1:
        _logger.info(f"Will use torch.nn.parallel.DistributedDataParallel() and {world_size} gpus")
        mp.spawn(run, args=(world_size, args), nprocs=world_size, join=True)
    elif args.gpus:
        run(0, 1, args)
    else:
        run("cpu", 1, args)


if __name__ == "__main__":
    main()
