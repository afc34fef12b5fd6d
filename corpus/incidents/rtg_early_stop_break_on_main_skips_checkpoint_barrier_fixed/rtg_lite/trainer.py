"""Transformer NMT trainer of RTG (rtg/module/tfmnmt.py, `TransformerTrainer.train`, v0.6.1): trains
for a fixed number of optimizer steps; every `check_point` steps the main process validates,
writes a checkpoint and feeds the early stopper, all processes meet at a barrier, and all of them
stop when the main process has left the early-stop flag file."""
import math
import time
from pathlib import Path
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import autocast

from rtg_lite import log
from rtg_lite.distrib import DistribTorch, dtorch


class EarlyStopper:
    """Stops when the validation score has not improved for `patience` validations."""

    def __init__(self, cur_step: int = 0, patience: int = 10, by: str = "loss", min_steps: int = 0,
                 enabled: bool = True):
        self.cur_step = cur_step
        self.patience = patience
        self.by = by
        self.min_steps = min_steps
        self.enabled = enabled
        self.minimizing = by == "loss"
        self.scores = []

    def step(self):
        self.cur_step += 1

    def validation(self, score: float):
        self.scores.append(score)

    def is_stop(self) -> bool:
        if not self.enabled or self.cur_step < self.min_steps or len(self.scores) <= self.patience:
            return False
        recent = self.scores[-self.patience:]
        older_best = (min if self.minimizing else max)(self.scores[:-self.patience])
        if self.minimizing:
            return min(recent) >= older_best
        return max(recent) <= older_best


class TrainerState:
    def __init__(self, model: nn.Module, check_point: int):
        self.model = model
        self.check_point = check_point
        self.steps = 0
        self.total_toks = 0
        self.total_loss = 0.0
        self.start = time.time()

    def train_mode(self, mode: bool):
        self.model.train(mode)

    def reset(self) -> float:
        loss = self.total_loss / max(self.steps, 1)
        self.steps, self.total_toks, self.total_loss, self.start = 0, 0, 0.0, time.time()
        return loss

    def step(self, toks: int, loss: float):
        self.steps += 1
        self.total_toks += toks
        self.total_loss += loss
        elapsed = time.time() - self.start
        msg = f"Loss:{self.total_loss / self.steps:.4f}, {int(self.total_toks / max(elapsed, 1e-6))}toks/s"
        return msg, self.steps == self.check_point


class TransformerNMT(nn.Module):
    def __init__(self, src_vocab: int, tgt_vocab: int, model_dim: int = 512, n_heads: int = 8,
                 enc_layers: int = 6, dec_layers: int = 6, ff_size: int = 2048, dropout: float = 0.1):
        super().__init__()
        self.src_embed = nn.Embedding(src_vocab, model_dim, padding_idx=0)
        self.tgt_embed = nn.Embedding(tgt_vocab, model_dim, padding_idx=0)
        self.transformer = nn.Transformer(model_dim, n_heads, enc_layers, dec_layers, ff_size, dropout,
                                          batch_first=True)
        self.generator = nn.Linear(model_dim, tgt_vocab)
        self.scale = math.sqrt(model_dim)

    def forward(self, x_seqs, y_seqs, x_pad_mask, y_causal_mask):
        src = self.src_embed(x_seqs) * self.scale
        tgt = self.tgt_embed(y_seqs) * self.scale
        hid = self.transformer(src, tgt, tgt_mask=y_causal_mask, src_key_padding_mask=x_pad_mask,
                               memory_key_padding_mask=x_pad_mask)
        return F.log_softmax(self.generator(hid), dim=-1)


class SmoothKLDLoss:
    """Label-smoothed loss; in train mode it runs backward and, on accumulation boundaries, the
    (distributed) optimizer step."""

    def __init__(self, opt: torch.optim.Optimizer, smoothing: float = 0.1, pad_idx: int = 0):
        self.opt = opt
        self.smoothing = smoothing
        self.pad_idx = pad_idx

    def __call__(self, log_probs, targets, num_toks, train_mode=False, take_step=False):
        nll = -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        smooth = -log_probs.mean(dim=-1)
        loss = (1 - self.smoothing) * nll + self.smoothing * smooth
        loss = loss.masked_fill(targets == self.pad_idx, 0.0).sum() / num_toks
        if train_mode:
            dtorch.backward(loss)
            if take_step:
                dtorch.step(self.opt)
        return loss.item()


class TransformerTrainer:
    def __init__(self, exp, model: nn.Module, lr: float = 5e-4, grad_accum: int = 1, device: str = "cuda"):
        self.exp = exp
        self.device = device
        self.model = dtorch.maybe_distributed(model.to(device))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9)
        self.loss_func = SmoothKLDLoss(self.opt)
        self.grad_accum_interval = grad_accum
        self.start_step = exp.last_step()
        self.opt_steps = 0

    def run_valid_epoch(self, val_data) -> float:
        total, count = 0.0, 0
        for batch in val_data:
            x_seqs, y_seqs = batch["x"].to(self.device), batch["y"].to(self.device)
            out = self._forward(x_seqs, y_seqs)
            total += self.loss_func(out, y_seqs, max(int((y_seqs != 0).sum()), 1), train_mode=False)
            count += 1
        return total / max(count, 1)

    def make_check_point(self, train_loss: float, val_loss: float, keep_models: int = 10):
        step = self.start_step + self.opt_steps
        self.exp.store_model(step, {"model": self.model.state_dict(), "optim": self.opt.state_dict()},
                             train_score=train_loss, val_score=val_loss, keep=keep_models)

    def _forward(self, x_seqs, y_seqs):
        bos = torch.full((len(y_seqs), 1), fill_value=2, dtype=torch.long, device=y_seqs.device)
        y_in = torch.cat([bos, y_seqs[:, :-1]], dim=1)
        causal = nn.Transformer.generate_square_subsequent_mask(y_in.shape[1], device=y_in.device)
        return self.model(x_seqs, y_in, x_seqs == 0, causal)

    def train(self, steps: int, check_point: int, batch_size: int, keep_models: int = 10,
              log_interval: int = 10, early_stop: Optional[dict] = None) -> bool:
        batches = steps * self.grad_accum_interval
        start_batch = self.start_step * self.grad_accum_interval
        check_point = check_point * self.grad_accum_interval
        distr = DistribTorch.instance()
        if batches <= start_batch:
            raise Exception(f"The model was already trained to {self.start_step} steps.")

        train_data = self.exp.get_train_data(batch_size=batch_size, steps=batches - start_batch,
                                             rank=max(distr.global_rank, 0), world_size=max(distr.world_size, 1))
        val_data = None
        if distr.is_global_main:
            val_data = self.exp.get_val_data(batch_size=batch_size)

        train_state = TrainerState(self.model, check_point=check_point)
        train_state.train_mode(True)
        unsaved_state = False
        batch_count = -1
        stopper = None
        early_stopped_flag = self.exp.model_dir / "_EARLY_STOPPED"
        if early_stopped_flag.exists():
            early_stopped_flag.unlink(missing_ok=True)
        if early_stop:
            stopper = EarlyStopper(cur_step=self.start_step, **early_stop)

        for batch in train_data:
            batch_count += 1
            take_step = (batch_count % self.grad_accum_interval) == 0
            x_seqs, y_seqs = batch["x"].to(self.device), batch["y"].to(self.device)
            num_toks = max(int((y_seqs != 0).sum()), 1)
            with autocast(enabled=dtorch.fp16):
                out = self._forward(x_seqs, y_seqs)
                loss = self.loss_func(out, y_seqs, num_toks, train_mode=True, take_step=take_step)
            if take_step:
                self.opt_steps += 1
                if stopper:
                    stopper.step()
            unsaved_state = True
            progress_msg, is_check_pt = train_state.step(num_toks, loss)
            if batch_count % log_interval == 0 and distr.is_global_main:
                log.info(f"step {self.start_step + batch_count}: {progress_msg}")

            # Save checkpoint
            if is_check_pt:
                train_loss = train_state.reset()
                log.info(f"Chkpt Train loss={train_loss}; Runs validation? {distr.is_global_main}")
                if distr.is_global_main:
                    train_state.train_mode(False)
                    with torch.no_grad():
                        val_loss = self.run_valid_epoch(val_data)
                        self.make_check_point(train_loss, val_loss=val_loss, keep_models=keep_models)
                    train_state.train_mode(True)

                    if stopper:
                        stopper.validation(val_loss)
                        if stopper.is_stop():
                            log.info(f"Stopping at {stopper.cur_step} because {stopper.by}"
                                     f" didnt improve over {stopper.patience} checkpoints")
                            early_stopped_flag.touch()

                distr.barrier()
                unsaved_state = False
                if early_stopped_flag.exists():
                    log.info("Main process was early stopped; so stopping this worker process also")
                    break

        # End of training
        if unsaved_state and distr.is_global_main:
            train_loss = train_state.reset()
            train_state.train_mode(False)
            with torch.no_grad():
                val_loss = self.run_valid_epoch(val_data)
            self.make_check_point(train_loss, val_loss=val_loss, keep_models=keep_models)

        distr.barrier()
        return early_stopped_flag.exists()


class Experiment:
    """Experiment directory: conf.yml, prepared data (token-id TSV) and saved models."""

    def __init__(self, work_dir: str, config: dict):
        self.work_dir = Path(work_dir)
        self.config = config
        self.model_dir = self.work_dir / "models"
        self.model_dir.mkdir(parents=True, exist_ok=True)

    def last_step(self) -> int:
        steps = [int(p.stem.split("_")[1]) for p in self.model_dir.glob("model_*.pkl")]
        return max(steps, default=0)

    @staticmethod
    def _read_pairs(path: Path):
        pairs = []
        with open(path, encoding="utf-8") as f:
            for line in f:
                src, tgt = line.rstrip("\n").split("\t")
                pairs.append(([int(t) for t in src.split()], [int(t) for t in tgt.split()]))
        return pairs

    @staticmethod
    def _make_batch(pairs):
        x_len = max(len(s) for s, _ in pairs)
        y_len = max(len(t) for _, t in pairs)
        x = torch.zeros(len(pairs), x_len, dtype=torch.long)
        y = torch.zeros(len(pairs), y_len, dtype=torch.long)
        for i, (s, t) in enumerate(pairs):
            x[i, :len(s)] = torch.tensor(s)
            y[i, :len(t)] = torch.tensor(t)
        return {"x": x, "y": y}

    def get_train_data(self, batch_size: int, steps: int, rank: int = 0, world_size: int = 1):
        """`steps` batches of this worker's shard, cycling over the data as needed."""
        pairs = self._read_pairs(self.work_dir / "data" / "train.tsv")[rank::world_size]
        generator = torch.Generator().manual_seed(rank)
        produced = 0
        while produced < steps:
            order = torch.randperm(len(pairs), generator=generator).tolist()
            for i in range(0, len(order) - batch_size + 1, batch_size):
                yield self._make_batch([pairs[j] for j in order[i:i + batch_size]])
                produced += 1
                if produced >= steps:
                    return

    def get_val_data(self, batch_size: int):
        pairs = self._read_pairs(self.work_dir / "data" / "valid.tsv")
        return [self._make_batch(pairs[i:i + batch_size]) for i in range(0, len(pairs), batch_size)]

    def store_model(self, step: int, state: dict, train_score: float, val_score: float, keep: int = 10):
        torch.save(state, self.model_dir / f"model_{step:06d}.pkl")
        with open(self.model_dir / "scores.tsv", "a") as f:
            f.write(f"{step}\t{train_score:.5f}\t{val_score:.5f}\n")
        for old in sorted(self.model_dir.glob("model_*.pkl"))[:-keep]:
            old.unlink()
