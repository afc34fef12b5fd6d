"""Dataset loading helpers for the multi-GPU GraphSAGE example."""
import dgl
import torch as th
from dgl.data import RedditDataset
from ogb.nodeproppred import DglNodePropPredDataset


def load_reddit():
    data = RedditDataset(self_loop=True)
    g = data[0]
    g.ndata["features"] = g.ndata["feat"]
    g.ndata["labels"] = g.ndata["label"]
    return g, data.num_classes


def load_ogb(name):
    data = DglNodePropPredDataset(name=name)
    splitted_idx = data.get_idx_split()
    graph, labels = data[0]
    labels = labels[:, 0]
    graph.ndata["features"] = graph.ndata["feat"]
    graph.ndata["labels"] = labels
    num_labels = len(th.unique(labels[th.logical_not(th.isnan(labels))]))
    train_nid, val_nid, test_nid = splitted_idx["train"], splitted_idx["valid"], splitted_idx["test"]
    for split, nid in (("train_mask", train_nid), ("val_mask", val_nid), ("test_mask", test_nid)):
        mask = th.zeros((graph.number_of_nodes(),), dtype=th.bool)
        mask[nid] = True
        graph.ndata[split] = mask
    return graph, num_labels


def inductive_split(g):
    train_g = g.subgraph(g.ndata["train_mask"])
    val_g = g.subgraph(g.ndata["train_mask"] | g.ndata["val_mask"])
    return train_g, val_g, g
