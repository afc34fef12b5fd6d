"""Multi-GPU GraphSAGE node classification with neighbor sampling (one process per GPU, DDP),
after DGL's examples/pytorch/graphsage/train_sampling_multi_gpu.py.

Thread: https://github.com/dmlc/dgl/issues/2539 ("Current Node/EdgeDataLoader usage in examples may
yield different number of batches per epoch for multiple GPUs.")
Project: dmlc/dgl
What hung: each process takes its own chunk of the training seed nodes with
`th.split(train_nid, math.ceil(len(train_nid) / n_gpus))[proc_id]` and iterates it with a
NodeDataLoader. The last chunk is shorter, so with e.g. 4097 nodes, 4 GPUs and batch size 1024 three
processes get 2 batches and the fourth gets 1; the process with fewer batches leaves the epoch loop
in train_utils.train_one_epoch while the others wait in DDP's gradient all-reduce (all 4 GPUs at
100% and no progress, as the issue reports when the example is cut to 4001 training nodes).
Fix: dgl#2911 added `use_ddp=True` to Node/Edge/GraphDataLoader, which splits the seed nodes with
PyTorch's DistributedSampler (padded to the same per-process count), plus `set_epoch` per epoch; the
examples were changed to pass the whole train_nid with `use_ddp=n_gpus > 1`.
Expected rankcheck finding: RC103 on the batch loop in train_utils.train_one_epoch.
Inferred: the loop lives in a helper module (train_utils.py) here; the example keeps it in run().
The per-epoch evaluation on process 0 and the checkpointing are left out.
"""
import argparse
import math

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

    # Split train_nid
    train_nid = th.split(train_nid, math.ceil(len(train_nid) / n_gpus))[proc_id]

    sampler = dgl.dataloading.MultiLayerNeighborSampler([int(fanout) for fanout in args.fan_out.split(",")])
    dataloader = dgl.dataloading.NodeDataLoader(
        train_g, train_nid, sampler,
        batch_size=args.batch_size, shuffle=True, drop_last=False, num_workers=args.num_workers)

    model = SAGE(train_nfeat.shape[1], args.num_hidden, n_classes, args.num_layers, F.relu, args.dropout)
    model = model.to(dev_id)
    if n_gpus > 1:
        model = DistributedDataParallel(model, device_ids=[dev_id], output_device=dev_id)
    loss_fcn = nn.CrossEntropyLoss().to(dev_id)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.num_epochs):
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
