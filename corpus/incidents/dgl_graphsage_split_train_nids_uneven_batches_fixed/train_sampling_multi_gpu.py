"""Safe twin of dgl_graphsage_split_train_nids_uneven_batches: the whole train_nid is handed to
NodeDataLoader with `use_ddp=n_gpus > 1` (dgl#2911), which splits the seed nodes with PyTorch's
DistributedSampler, padded to the same number of samples per process, and the sampler is reseeded
each epoch with `dataloader.set_epoch(epoch)`; every process runs the same number of batches.

Thread: https://github.com/dmlc/dgl/issues/2539
"""
import argparse

import dgl
import torch as th
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.nn.parallel import DistributedDataParallel

from load_graph import inductive_split, load_ogb, load_reddit
from model import SAGE
from train_utils import train_one_epoch


def run(proc_id, n_gpus, args, devices, data):
    dev_id = devices[proc_id]
    if n_gpus > 1:
        dist_init_method = "tcp://{master_ip}:{master_port}".format(master_ip="127.0.0.1", master_port="12345")
        th.distributed.init_process_group(backend="nccl", init_method=dist_init_method,
                                          world_size=n_gpus, rank=proc_id)
    th.cuda.set_device(dev_id)

    n_classes, train_g, val_g, test_g = data
    train_nfeat = train_g.ndata.pop("features")
    train_labels = train_g.ndata.pop("labels")
    train_mask = train_g.ndata["train_mask"]
    train_nid = train_mask.nonzero().squeeze()

    sampler = dgl.dataloading.MultiLayerNeighborSampler([int(fanout) for fanout in args.fan_out.split(",")])
    dataloader = dgl.dataloading.NodeDataLoader(
        train_g, train_nid, sampler,
        use_ddp=n_gpus > 1,
        batch_size=args.batch_size, shuffle=True, drop_last=False, num_workers=args.num_workers)

    model = SAGE(train_nfeat.shape[1], args.num_hidden, n_classes, args.num_layers, F.relu, args.dropout)
    model = model.to(dev_id)
    if n_gpus > 1:
        model = DistributedDataParallel(model, device_ids=[dev_id], output_device=dev_id)
    loss_fcn = nn.CrossEntropyLoss().to(dev_id)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.num_epochs):
        if n_gpus > 1:
            dataloader.set_epoch(epoch)
        n_steps = train_one_epoch(model, dataloader, train_nfeat, train_labels, optimizer, loss_fcn,
                                  dev_id, proc_id, args.log_every)
        if proc_id == 0:
            print(f"Epoch {epoch:05d} | {n_steps} steps")

    if n_gpus > 1:
        th.distributed.barrier()


if __name__ == "__main__":
    argparser = argparse.ArgumentParser("multi-gpu training")
    argparser.add_argument("--gpu", type=str, default="0,1,2,3")
    argparser.add_argument("--dataset", type=str, default="reddit")
    argparser.add_argument("--num-epochs", type=int, default=20)
    argparser.add_argument("--num-hidden", type=int, default=16)
    argparser.add_argument("--num-layers", type=int, default=2)
    argparser.add_argument("--fan-out", type=str, default="10,25")
    argparser.add_argument("--batch-size", type=int, default=1000)
    argparser.add_argument("--log-every", type=int, default=20)
    argparser.add_argument("--lr", type=float, default=0.003)
    argparser.add_argument("--dropout", type=float, default=0.5)
    argparser.add_argument("--num-workers", type=int, default=0)
    args = argparser.parse_args()

    devices = list(map(int, args.gpu.split(",")))
    n_gpus = len(devices)
    g, n_classes = load_reddit() if args.dataset == "reddit" else load_ogb(args.dataset)
    train_g, val_g, test_g = inductive_split(g)
    train_g.create_formats_()
    data = n_classes, train_g, val_g, test_g

    if n_gpus == 1:
        run(0, n_gpus, args, devices, data)
    else:
        mp.spawn(run, args=(n_gpus, args, devices, data), nprocs=n_gpus)
