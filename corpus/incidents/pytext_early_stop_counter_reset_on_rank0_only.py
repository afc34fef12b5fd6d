"""PyText document classification trained with distributed data parallel (`pytext train <
config.json` with `distributed_world_size: 4`): every worker trains on its shard, evaluates, asks
the metric reporter whether the epoch's model is better than the best so far, and stops early when
the eval metric has not improved for `early_stop_after` epochs.

Thread: https://github.com/facebookresearch/pytext/pull/585 ("In distributed training all workers
should update best epoch"; Differential Revision D15320817, landed as db46abe)
Project: facebookresearch/pytext (pytext/trainers/trainer.py)
What hung: the PR summary: "Previously, only the rank 0 worker updated
`epochs_since_last_improvement`. When the flag `early_stop_after` is specified, other workers
quickly think there has been no improvement and terminate early, leaving worker 0 stuck."
`train` adds one to `state.epochs_since_last_improvement` at the start of every epoch, and
`update_best_model` is the only place that sets it back to 0 -- but it returns at once on every
worker whose rank is not 0 (only one worker should keep the best state and write checkpoints).
So on ranks 1..N-1 the counter only grows, `continue_training` turns False after
`early_stop_after` epochs and they leave the epoch loop (every worker evaluates the whole, unsharded
eval set, so they all see the same metric), while rank 0, which keeps improving, starts
the next epoch and waits in the DDP gradient all-reduce of its first backward for workers that have
returned from `train`.
Fix (the PR, merged): `update_best_model` resets the counter and records the best metric on every
worker, and only the copy of the model state (the checkpoint part) stays behind `if state.rank !=
0: return`.
Expected rankcheck finding: RC103 on the epoch loop `while self.continue_training(state):`, whose
trip count differs per rank because the counter it tests is reset on rank 0 only.
(Trimmed: metric reporters, tensorboard, fp16 and the data handlers are reduced to a small
document-classification task; the distributed model wrapper is plain DistributedDataParallel.
Inferred: the launcher reads the rank from the environment (PyText spawned one process per GPU),
and the eval set is read whole by every worker.)
"""
import argparse
import json
import os
import time
from typing import Any, List, Optional, Tuple

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Stage:
    TRAIN = "Training"
    EVAL = "Evaluation"
    TEST = "Test"


class TrainingState:
    model: nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: Any
    start_time: float
    epoch: int = 0
    rank: int = 0
    stage: str = Stage.TRAIN
    epochs_since_last_improvement: int = 0
    best_model_state: Any = None
    best_model_metric: Any = None

    def __init__(self, **kwargs):
        unknown_keys = kwargs.keys() - TrainingState.__annotations__.keys()
        if unknown_keys:
            raise TypeError(f"TrainingState unexpected attributes {unknown_keys}")
        vars(self).update(kwargs)


class ClassificationMetricReporter:
    """Accumulates predictions of one epoch and reports accuracy / macro F1 on this worker's data."""

    def __init__(self, num_labels: int):
        self.num_labels = num_labels
        self._reset()

    def _reset(self):
        self.preds: List[int] = []
        self.targets: List[int] = []
        self.losses: List[float] = []

    def add_batch_stats(self, preds, targets, loss):
        self.preds.extend(preds.tolist())
        self.targets.extend(targets.tolist())
        self.losses.append(float(loss))

    def report_metric(self, stage, epoch, print_to_channels=True):
        correct = sum(int(p == t) for p, t in zip(self.preds, self.targets))
        f1s = []
        for label in range(self.num_labels):
            tp = sum(int(p == label and t == label) for p, t in zip(self.preds, self.targets))
            fp = sum(int(p == label and t != label) for p, t in zip(self.preds, self.targets))
            fn = sum(int(p != label and t == label) for p, t in zip(self.preds, self.targets))
            f1s.append(2 * tp / max(2 * tp + fp + fn, 1))
        metric = {
            "accuracy": correct / max(len(self.targets), 1),
            "macro_f1": sum(f1s) / len(f1s),
            "loss": sum(self.losses) / max(len(self.losses), 1),
        }
        if print_to_channels:
            print(f"{stage} epoch {epoch}: {json.dumps(metric)}", flush=True)
        self._reset()
        return metric

    @staticmethod
    def get_model_select_metric(metric):
        return metric["macro_f1"]

    def compare_metric(self, new_metric, old_metric):
        if old_metric is None:
            return True
        return self.get_model_select_metric(new_metric) > self.get_model_select_metric(old_metric)


class DocModel(nn.Module):
    def __init__(self, vocab_size: int, embed_dim: int, num_labels: int):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, mode="mean")
        self.representation = nn.Sequential(nn.Linear(embed_dim, embed_dim), nn.ReLU(), nn.Dropout(0.2))
        self.decoder = nn.Linear(embed_dim, num_labels)

    def forward(self, tokens, offsets):
        return self.decoder(self.representation(self.embedding(tokens, offsets)))


class Trainer:
    class Config:
        def __init__(self, epochs=10, early_stop_after=0, max_clip_norm=None, report_train_metrics=True,
                     target_time_limit_seconds=None, do_eval=True, lr=1e-3):
            self.epochs = epochs
            self.early_stop_after = early_stop_after
            self.max_clip_norm = max_clip_norm
            self.report_train_metrics = report_train_metrics
            self.target_time_limit_seconds = target_time_limit_seconds
            self.do_eval = do_eval
            self.lr = lr

    def __init__(self, config: "Trainer.Config", model: nn.Module):
        self.config = config
        self.optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
        self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(self.optimizer, mode="max", patience=1)

    def set_up_training(self, state: TrainingState, device: torch.device, world_size: int):
        state.model.to(device)
        if world_size > 1:
            state.model = DistributedDataParallel(state.model, device_ids=[device.index],
                                                  output_device=device.index, broadcast_buffers=False)
        state.start_time = time.time()

    def continue_training(self, state: TrainingState) -> bool:
        if state.epoch >= self.config.epochs:
            return False
        # Check whether the model has improved recently enough (only if we evaluate at all)
        if self.config.do_eval and state.epochs_since_last_improvement >= (
            self.config.early_stop_after or float("inf")
        ):
            print(f"Worker {state.rank}: Eval metric hasn't changed for "
                  f"{state.epochs_since_last_improvement} epochs. Stopping now.", flush=True)
            return False
        epochs_run = state.epoch + 1
        time_elapsed = time.time() - state.start_time
        expected_next_epoch_time = time_elapsed + time_elapsed / epochs_run
        limit = self.config.target_time_limit_seconds
        if limit is not None and expected_next_epoch_time > limit:
            print(f"Worker {state.rank}: stopping after {epochs_run} epochs (time limit {limit}s)")
            return False
        return True

    def update_best_model(self, state: TrainingState, save_dir: str, eval_metric):
        # Only one worker should save checkpoints
        if state.rank != 0:
            return

        state.epochs_since_last_improvement = 0
        state.best_model_metric = eval_metric
        print("Found a better model!", flush=True)

        model_state = state.model.state_dict()
        # save to cpu to avoid multiple model copies in gpu memory
        state.best_model_state = {k: v.cpu() for k, v in model_state.items()}

    def save_checkpoint(self, state: TrainingState, save_dir: str):
        # Only one worker should save checkpoints
        if state.rank != 0:
            return
        os.makedirs(save_dir, exist_ok=True)
        torch.save(state.best_model_state, os.path.join(save_dir, f"model-ep{state.epoch}.pt"))

    def load_best_model(self, state: TrainingState):
        state.model.load_state_dict({k: v.to(next(state.model.parameters()).device)
                                     for k, v in state.best_model_state.items()})

    def train(self, train_loader, eval_loader, model, metric_reporter, save_dir, device,
              rank: int = 0, world_size: int = 1) -> Tuple[nn.Module, Any]:
        state = TrainingState(model=model, optimizer=self.optimizer, scheduler=self.scheduler, rank=rank)
        self.set_up_training(state, device, world_size)

        while self.continue_training(state):  # expect: RC103
            state.epoch += 1
            state.epochs_since_last_improvement += 1
            print(f"\nWorker {state.rank} starting epoch {state.epoch}", flush=True)
            if isinstance(train_loader.sampler, DistributedSampler):
                train_loader.sampler.set_epoch(state.epoch)

            state.stage = Stage.TRAIN
            state.model.train()
            self.run_epoch(state, train_loader, metric_reporter, device)

            state.stage = Stage.EVAL
            state.model.eval()
            with torch.no_grad():
                eval_metric = self.run_epoch(state, eval_loader, metric_reporter, device)

            if not self.config.do_eval:
                continue

            state.scheduler.step(metric_reporter.get_model_select_metric(eval_metric))

            # Did we train a better model?
            better_model = metric_reporter.compare_metric(eval_metric, state.best_model_metric)
            if better_model:
                self.update_best_model(state, save_dir, eval_metric)
                self.save_checkpoint(state, save_dir)

        # Only bother loading the best model for master worker
        if rank == 0 and state.best_model_state is not None:
            self.load_best_model(state)
        return state.model, state.best_model_metric

    def run_epoch(self, state: TrainingState, loader, metric_reporter, device):
        report_metric = state.stage != Stage.TRAIN or self.config.report_train_metrics
        for tokens, offsets, targets in loader:
            tokens, offsets, targets = tokens.to(device), offsets.to(device), targets.to(device)
            if state.stage == Stage.TRAIN:
                state.optimizer.zero_grad()
            logits = state.model(tokens, offsets)
            loss = F.cross_entropy(logits, targets)
            if state.stage == Stage.TRAIN:
                loss.backward()
                if self.config.max_clip_norm is not None:
                    torch.nn.utils.clip_grad_norm_(state.model.parameters(), self.config.max_clip_norm)
                state.optimizer.step()
            if report_metric:
                metric_reporter.add_batch_stats(logits.argmax(dim=-1), targets, loss.item())
        if report_metric:
            return metric_reporter.report_metric(state.stage, state.epoch, print_to_channels=(state.rank == 0))
        metric_reporter._reset()
        return None


class TsvDocDataset(Dataset):
    """`label<TAB>text` lines, tokenized by whitespace against a fixed vocabulary."""

    def __init__(self, path: str, vocab: dict, label_vocab: dict):
        self.rows = []
        with open(path, encoding="utf-8") as f:
            for line in f:
                label, text = line.rstrip("\n").split("\t", 1)
                ids = [vocab.get(tok, 1) for tok in text.lower().split()] or [1]
                self.rows.append((torch.tensor(ids, dtype=torch.long), label_vocab[label]))

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx):
        return self.rows[idx]


def collate(batch):
    tokens = torch.cat([ids for ids, _ in batch])
    lengths = torch.tensor([len(ids) for ids, _ in batch])
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
    return tokens, offsets, torch.tensor([label for _, label in batch])


def build_vocab(path: str, max_size: int = 50000):
    counts, labels = {}, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            label, text = line.rstrip("\n").split("\t", 1)
            labels.setdefault(label, len(labels))
            for tok in text.lower().split():
                counts[tok] = counts.get(tok, 0) + 1
    vocab = {"<pad>": 0, "<unk>": 1}
    for tok, _ in sorted(counts.items(), key=lambda kv: -kv[1])[: max_size - 2]:
        vocab[tok] = len(vocab)
    return vocab, labels


def dist_init(rank: int, world_size: int, init_method: str):
    if world_size > 1:
        dist.init_process_group(backend="nccl", init_method=init_method, world_size=world_size, rank=rank)


def main():
    parser = argparse.ArgumentParser(description="pytext-style distributed doc classification")
    parser.add_argument("--config", required=True, help="JSON task config")
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = json.load(f)

    rank = int(os.environ.get("RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    dist_init(rank, world_size, cfg.get("dist_init_url", "env://"))
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    vocab, label_vocab = build_vocab(cfg["train_path"])
    train_set = TsvDocDataset(cfg["train_path"], vocab, label_vocab)
    eval_set = TsvDocDataset(cfg["eval_path"], vocab, label_vocab)
    train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=cfg.get("batch_size", 64), sampler=train_sampler,
                              collate_fn=collate)
    # the eval set is not sharded: every worker evaluates all of it with the same (synced) weights
    eval_loader = DataLoader(eval_set, batch_size=cfg.get("eval_batch_size", 128), shuffle=False,
                             collate_fn=collate)

    model = DocModel(len(vocab), cfg.get("embed_dim", 128), len(label_vocab))
    trainer_cfg = Trainer.Config(
        epochs=cfg.get("epochs", 20),
        early_stop_after=cfg.get("early_stop_after", 3),
        max_clip_norm=cfg.get("max_clip_norm"),
        lr=cfg.get("lr", 1e-3),
    )
    trainer = Trainer(trainer_cfg, model)
    reporter = ClassificationMetricReporter(len(label_vocab))
    model, best_metric = trainer.train(train_loader, eval_loader, model, reporter, cfg["save_dir"], device,
                                       rank=rank, world_size=world_size)
    if rank == 0:
        print(f"best eval metric: {best_metric}")
    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
