"""Rank helpers, log buffer and iteration-based runner (as mmcv.runner.dist_utils, LogBuffer and
IterBasedRunner)."""
import functools
import time

import numpy as np
import torch.distributed as dist


def get_dist_info():
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def master_only(func):
    """Run the decorated hook method on rank 0 only; the other ranks skip it."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if get_dist_info()[0] == 0:
            return func(*args, **kwargs)

    return wrapper


class LogBuffer:
    def __init__(self):
        self.val_history, self.n_history, self.output, self.ready = {}, {}, {}, False

    def update(self, vars, count=1):
        for key, var in vars.items():
            self.val_history.setdefault(key, []).append(var)
            self.n_history.setdefault(key, []).append(count)

    def average(self, n=0):
        for key, values in self.val_history.items():
            nums = np.array(self.n_history[key][-n:])
            self.output[key] = float(np.sum(np.array(values[-n:]) * nums) / np.sum(nums))
        self.ready = True

    def clear_output(self):
        self.output.clear()
        self.ready = False


class IterBasedRunner:
    def __init__(self, model, optimizer, work_dir, max_iters):
        self.model, self.optimizer, self.work_dir, self.max_iters = model, optimizer, work_dir, max_iters
        self.rank, self.world_size = get_dist_info()
        self.log_buffer = LogBuffer()
        self.hooks, self.iter, self.mode = [], 0, "train"

    def register_logger_hooks(self, log_config):
        for hook in log_config["hooks"]:
            hook.interval = log_config["interval"]
            self.hooks.append(hook)

    def call_hook(self, fn_name):
        for hook in self.hooks:
            getattr(hook, fn_name)(self)

    def run(self, data_loader):
        self.call_hook("before_run")
        data_iter, epoch = iter(data_loader), 0
        while self.iter < self.max_iters:
            t0 = time.time()
            data_batch = next(data_iter, None)
            if data_batch is None:
                epoch += 1
                data_loader.sampler.set_epoch(epoch)
                data_iter = iter(data_loader)
                data_batch = next(data_iter)
            outputs = self.model.train_step(data_batch, self.optimizer)
            self.optimizer.zero_grad()
            outputs["loss"].backward()
            self.optimizer.step()
            self.log_buffer.update(outputs["log_vars"], outputs["num_samples"])
            self.log_buffer.update({"time": time.time() - t0})
            self.call_hook("after_train_iter")
            self.iter += 1
        self.call_hook("after_run")
