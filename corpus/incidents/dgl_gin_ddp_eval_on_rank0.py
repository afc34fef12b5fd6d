"""Multi-GPU graph property prediction (GIN + virtual node on ogbg-molhiv) with DGL and DDP,
started with mp.spawn. After every epoch rank 0 alone evaluates on the validation and test
splits, then every rank meets in a barrier.

Thread: https://github.com/dmlc/dgl/pull/4385 ("[EXAMPLE]Add multi gpu graph predication GIN+virtualnode example")
Project: dmlc/dgl
What hung: rank 0 called `evaluate(...)` with the DistributedDataParallel-wrapped model inside
`if rank == 0:`. A DDP forward is collective (with the default `broadcast_buffers=True` it
broadcasts the BatchNorm buffers of the MLPs before running), so rank 0 waited in that broadcast
while the other ranks had gone on to `dist.barrier()`. The reviewer asked whether passing `model`
was enough; the author answered "No, according to my test, use DDP model directly may cause
stuck here, so I change it to literal model".
Fix (the PR): evaluate the bare module, `model.module`, on rank 0 (no collective in its forward).
Inferred: that the collective is DDP's buffer broadcast (the thread says only "stuck"); the
model has BatchNorm1d buffers, so the broadcast is issued.
Expected rankcheck finding: RC101 on the guarded `evaluate(...)` calls that run the DDP model.
"""
import argparse
import time

import dgl
import dgl.nn as dglnn
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from dgl.data import AsGraphPredDataset
from dgl.dataloading import GraphDataLoader
from ogb.graphproppred import DglGraphPropPredDataset, Evaluator
from ogb.graphproppred.mol_encoder import AtomEncoder, BondEncoder
from torch.nn.parallel import DistributedDataParallel


def mlp(dim):
    return nn.Sequential(nn.Linear(dim, 2 * dim), nn.BatchNorm1d(2 * dim), nn.ReLU(),
                         nn.Linear(2 * dim, dim), nn.BatchNorm1d(dim))


class VirtualNodeGIN(nn.Module):
    def __init__(self, hidden, n_tasks, n_layers=5, dropout=0.5):
        super().__init__()
        self.atom_enc = AtomEncoder(hidden)
        self.bond_encs = nn.ModuleList(BondEncoder(hidden) for _ in range(n_layers))
        self.convs = nn.ModuleList(dglnn.GINEConv(mlp(hidden), learn_eps=True) for _ in range(n_layers))
        self.vn_emb = nn.Embedding(1, hidden)
        nn.init.zeros_(self.vn_emb.weight)
        self.vn_mlps = nn.ModuleList(mlp(hidden) for _ in range(n_layers - 1))
        self.readout, self.vn_pool = dglnn.AvgPooling(), dglnn.SumPooling()
        self.head = nn.Linear(hidden, n_tasks)
        self.dropout = dropout

    def forward(self, g, node_feat, edge_feat):
        vn = self.vn_emb.weight.expand(g.batch_size, -1)
        h = self.atom_enc(node_feat)
        last = len(self.convs) - 1
        for i, conv in enumerate(self.convs):
            h = conv(g, h + dgl.broadcast_nodes(g, vn), self.bond_encs[i](edge_feat))
            h = F.dropout(F.relu(h) if i < last else h, self.dropout, self.training)
            if i < last:
                vn = F.dropout(F.relu(self.vn_mlps[i](self.vn_pool(g, h) + vn)), self.dropout, self.training)
        return self.head(self.readout(g, h))


@torch.no_grad()
def evaluate(loader, device, model, evaluator):
    model.eval()
    ys, preds = [], []
    for g, y in loader:
        g, y = g.to(device), y.to(device)
        out = model(g, g.ndata["feat"], g.edata["feat"])
        ys.append(y.view(out.shape).cpu())
        preds.append(out.cpu())
    return evaluator.eval({"y_true": torch.cat(ys).numpy(), "y_pred": torch.cat(preds).numpy()})


def run(rank, world_size, args):
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{args.port}",
                            world_size=world_size, rank=rank)
    torch.cuda.set_device(rank)
    dataset = AsGraphPredDataset(DglGraphPropPredDataset(args.dataset, args.root))
    evaluator = Evaluator(args.dataset)

    model = DistributedDataParallel(VirtualNodeGIN(args.hidden, dataset.num_tasks).to(rank),
                                    device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=50, gamma=0.5)
    train_loader = GraphDataLoader(dataset[dataset.train_idx], batch_size=args.batch_size,
                                   use_ddp=True, shuffle=True)
    val_loader = GraphDataLoader(dataset[dataset.val_idx], batch_size=args.batch_size)
    test_loader = GraphDataLoader(dataset[dataset.test_idx], batch_size=args.batch_size)

    for epoch in range(args.epochs):
        model.train()
        train_loader.set_epoch(epoch)
        start = time.time()
        for g, y in train_loader:
            g, y = g.to(rank), y.to(rank)
            logits = model(g, g.ndata["feat"], g.edata["feat"])
            labeled = y == y
            loss = F.binary_cross_entropy_with_logits(logits.float()[labeled], y.float()[labeled])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()

        if rank == 0:
            val = evaluate(val_loader, rank, model, evaluator)[evaluator.eval_metric]  # expect: RC101
            test = evaluate(test_loader, rank, model, evaluator)[evaluator.eval_metric]  # expect: RC101
            print(f"epoch {epoch:03d} loss {loss.item():.4f} val {val:.4f} test {test:.4f} "
                  f"({time.time() - start:.1f}s)")
        dist.barrier()

    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="ogbg-molhiv", choices=["ogbg-molhiv", "ogbg-molpcba"])
    parser.add_argument("--root", default="./data/OGB")
    parser.add_argument("--hidden", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--port", type=int, default=12347)
    args = parser.parse_args()
    n_gpus = torch.cuda.device_count()
    mp.spawn(run, args=(n_gpus, args), nprocs=n_gpus, join=True)
