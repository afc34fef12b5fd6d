"""AllenNLP's trainer stops early when the validation metric has not improved for `patience`
epochs; with a custom metric that is computed from this worker's own validation share and never
reduced across workers, each worker tracks its own patience.

Thread: https://github.com/allenai/allennlp/issues/4794 ("Multi GPU training deadlocks when using patience")
Project: allenai/allennlp (GradientDescentTrainer with DistributedDataParallel)
What hung: "one worker runs out of patience while the other thinks it's the best one yet": the
worker that stops leaves the epoch loop, the others start the next epoch and wait in DDP's
gradient all-reduce for it. The metric was a custom retrieval accuracy computed from the
embeddings this worker collected, with no distributed reduction.
Fix (maintainers' advice): reduce the metric across workers (all-reduce the counts) in
`get_metric`, so every worker sees the same value and stops on the same epoch.
Expected rankcheck finding: RC103 on the `break` taken when this worker's tracker runs out of
patience.
(The trainer and metric are reduced to what the thread describes.)
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
        accuracy = float((scores.argmax(axis=1) == np.arange(len(q))).mean())
        if reset:
            self.q_embs, self.d_embs = [], []
        return accuracy


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
            break  # expect: RC103
