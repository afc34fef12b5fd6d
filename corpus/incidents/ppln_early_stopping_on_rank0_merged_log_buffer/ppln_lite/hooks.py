"""Hooks called by the Runner: optimizer step, log-buffer synchronization across DDP processes,
early stopping and checkpointing."""
import os
import os.path as osp
import pickle
from enum import IntEnum
from functools import wraps

import numpy as np
import torch
import torch.distributed as dist


class Priority(IntEnum):
    HIGHEST = 0
    HIGH = 25
    NORMAL = 50
    LOW = 75
    LOWEST = 100


def get_dist_info():
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def master_only(func):
    @wraps(func)
    def wrapper(*args, **kwargs):
        rank, _ = get_dist_info()
        if rank == 0:
            return func(*args, **kwargs)

    return wrapper


class BaseHook:
    @property
    def priority(self):
        return Priority.NORMAL

    def before_run(self, runner):
        pass

    def after_run(self, runner):
        pass

    def before_epoch(self, runner):
        pass

    def after_epoch(self, runner):
        pass

    def before_iter(self, runner):
        pass

    def after_iter(self, runner):
        pass

    def before_train_epoch(self, runner):
        self.before_epoch(runner)

    def before_val_epoch(self, runner):
        self.before_epoch(runner)

    def after_train_epoch(self, runner):
        self.after_epoch(runner)

    def after_val_epoch(self, runner):
        self.after_epoch(runner)

    def before_train_iter(self, runner):
        self.before_iter(runner)

    def before_val_iter(self, runner):
        self.before_iter(runner)

    def after_train_iter(self, runner):
        self.after_iter(runner)

    def after_val_iter(self, runner):
        self.after_iter(runner)


class HookList:
    def __init__(self, hooks):
        self.hooks = sorted(hooks, key=lambda h: h.priority)

    def call(self, name):
        for hook in self.hooks:
            getattr(hook, name)(self)


class OptimizerHook(BaseHook):
    def __init__(self, grad_clip=None):
        self.grad_clip = grad_clip

    @property
    def priority(self):
        return Priority.HIGH

    def after_train_iter(self, runner):
        optimizer = runner.optimizers["base"]
        optimizer.zero_grad()
        runner.outputs["loss"].backward()
        if self.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(runner.model.parameters(), self.grad_clip)
        optimizer.step()


class LogBufferHook(BaseHook):
    @property
    def priority(self):
        return Priority.LOW

    @staticmethod
    def sync(runner):
        """Rank 0 collects the other ranks' histories through files in the work dir."""
        rank, world_size = get_dist_info()
        if rank == 0:
            dist.barrier()
            for i in range(1, world_size):
                tmp_file = osp.join(runner.work_dir, f"tmp_{i}.pkl")
                with open(tmp_file, "rb") as fh:
                    other = pickle.load(fh)
                for key in other["n_history"]:
                    runner.log_buffer.value_history[key].extend(other["value_history"][key])
                    runner.log_buffer.n_history[key].extend(other["n_history"][key])
                os.remove(tmp_file)
        else:
            tmp_file = osp.join(runner.work_dir, f"tmp_{rank}.pkl")
            with open(tmp_file, "wb") as fh:
                pickle.dump({"value_history": dict(runner.log_buffer.value_history),
                             "n_history": dict(runner.log_buffer.n_history)}, fh)
            dist.barrier()
        dist.barrier()

    def before_epoch(self, runner):
        runner.log_buffer.clear()

    def after_iter(self, runner):
        runner.log_buffer.average()

    def after_epoch(self, runner):
        if dist.is_initialized():
            self.sync(runner)
        runner.log_buffer.average()


class EarlyStoppingHook(BaseHook):
    def __init__(self, metric_name="base_loss", patience=0, mode="min", verbose=1):
        self.metric_name = metric_name
        self.patience = patience
        self.verbose = verbose
        self._is_update = np.less if mode == "min" else np.greater
        self._best = np.inf if mode == "min" else -np.inf
        self._wait = 0
        self._stopped_epoch = 0

    @property
    def priority(self):
        return Priority.LOWEST

    def after_val_epoch(self, runner):
        metric = runner.log_buffer.output[self.metric_name]
        if self._is_update(metric, self._best):
            self._best = metric
            self._wait = 0
        else:
            self._wait += 1
            if self._wait >= self.patience:
                self._stopped_epoch = runner.epoch
                runner.stop_training = True

    def after_run(self, runner):
        if self._stopped_epoch > 0 and self.verbose > 0:
            runner.logger.info(f"Epoch {self._stopped_epoch + 1}: early stopping")


class CheckpointHook(BaseHook):
    def __init__(self, metric_name="base_loss", mode="min"):
        self.metric_name = metric_name
        self._is_update = np.less if mode == "min" else np.greater
        self._best = np.inf if mode == "min" else -np.inf

    @property
    def priority(self):
        return Priority.LOWEST

    @master_only
    def after_val_epoch(self, runner):
        metric = runner.log_buffer.output[self.metric_name]
        model = runner.model.module if hasattr(runner.model, "module") else runner.model
        torch.save(model.state_dict(), osp.join(runner.work_dir, "last.pth"))
        if self._is_update(metric, self._best):
            self._best = metric
            torch.save(model.state_dict(), osp.join(runner.work_dir, "best.pth"))
            runner.logger.info(f"Best checkpoint changed: epoch {runner.epoch + 1} with {metric:.4f}")

    def after_run(self, runner):
        runner.logger.info(f"Best {self.metric_name}: {self._best:.4f}")
