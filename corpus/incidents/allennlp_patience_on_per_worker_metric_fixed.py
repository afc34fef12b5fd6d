"""Safe twin of allennlp_patience_on_per_worker_metric: the metric all-reduces its hit and query
counts across workers before computing the accuracy, so every worker's tracker sees the same value
and runs out of patience on the same epoch.

Thread: https://github.com/allenai/allennlp/issues/4794
"""
from typing import List

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Retrieval:
    def __init__(self) -> None:
        self.q_embs: List[np.ndarray] = []
        self.d_embs: List[np.ndarray] = []

    def __call__(self, queries: torch.Tensor, documents: torch.Tensor) -> None:
        self.q_embs.append(queries.detach().cpu().numpy())
        self.d_embs.append(documents.detach().cpu().numpy())

    def get_metric(self, reset: bool) -> float:
        q = np.concatenate(self.q_embs)
        d = np.concatenate(self.d_embs)
        scores = q @ d.T
        counts = torch.tensor([float((scores.argmax(axis=1) == np.arange(len(q))).sum()), float(len(q))])
        dist.all_reduce(counts)
        if reset:
            self.q_embs, self.d_embs = [], []
        return (counts[0] / counts[1]).item()


class MetricTracker:
    def __init__(self, patience: int) -> None:
        self._patience = patience
        self._best = None
        self._epochs_with_no_improvement = 0

    def add_metric(self, metric: float) -> None:
        if self._best is None or metric > self._best:
            self._best = metric
            self._epochs_with_no_improvement = 0
        else:
            self._epochs_with_no_improvement += 1

    def should_stop_early(self) -> bool:
        return self._epochs_with_no_improvement >= self._patience


def train(model, optimizer, train_loader, validation_loader, num_epochs: int, patience: int, local_rank: int):
    dist.init_process_group("nccl")
    ddp_model = DDP(model, device_ids=[local_rank])
    metric = Retrieval()
    tracker = MetricTracker(patience)
    for epoch in range(num_epochs):
        ddp_model.train()
        for batch in train_loader:
            loss = ddp_model(**batch)["loss"]
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        ddp_model.eval()
        with torch.no_grad():
            for batch in validation_loader:
                output = ddp_model.module(**batch)
                metric(output["query_embeddings"], output["document_embeddings"])
        tracker.add_metric(metric.get_metric(reset=True))
        if tracker.should_stop_early():
            break
