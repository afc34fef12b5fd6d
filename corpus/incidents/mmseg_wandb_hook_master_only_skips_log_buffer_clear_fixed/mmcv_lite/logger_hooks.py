"""Logger hooks of the runner (as mmcv.runner.hooks.logger: LoggerHook, TextLoggerHook,
WandbLoggerHook). Every hook in `log_config` runs `after_train_iter` on every rank; the last logger
hook registered clears the shared log buffer after logging (`reset_flag`).

Safe twin of mmseg_wandb_hook_master_only_skips_log_buffer_clear: unchanged here; the fix of
mmsegmentation#2398 is in mmseg_hooks/wandblogger_hook.py, so the buffer is cleared on every rank
and every rank's text logger reduces at the same iterations.

Thread: https://github.com/open-mmlab/mmsegmentation/issues/2137
"""
import torch
import torch.distributed as dist

from mmcv_lite.runner import master_only


class LoggerHook:
    def __init__(self, interval=10, reset_flag=False):
        self.interval = interval
        self.reset_flag = reset_flag

    def log(self, runner):
        raise NotImplementedError

    def before_run(self, runner):
        for hook in runner.hooks[::-1]:  # the last logger hook clears the buffer after logging
            if isinstance(hook, LoggerHook):
                hook.reset_flag = True
                break

    def every_n_iters(self, runner, n):
        return (runner.iter + 1) % n == 0 if n > 0 else False

    def after_train_iter(self, runner):
        if self.every_n_iters(runner, self.interval):
            runner.log_buffer.average(self.interval)
        if runner.log_buffer.ready:
            self.log(runner)
            if self.reset_flag:
                runner.log_buffer.clear_output()

    def after_run(self, runner):
        pass


class TextLoggerHook(LoggerHook):
    def _get_max_memory(self, runner):
        device = getattr(runner.model, "output_device", None)
        mem = torch.cuda.max_memory_allocated(device=device)
        mem_mb = torch.tensor([mem / (1024 * 1024)], dtype=torch.int, device=device)
        if runner.world_size > 1:
            dist.reduce(mem_mb, 0, op=dist.ReduceOp.MAX)
        return mem_mb.item()

    def log(self, runner):
        log_dict = {"mode": runner.mode, "iter": runner.iter + 1}
        if "time" in runner.log_buffer.output and torch.cuda.is_available():
            log_dict["memory"] = self._get_max_memory(runner)
        log_dict.update(runner.log_buffer.output)
        if runner.rank == 0:
            print(f"Iter [{runner.iter + 1}/{runner.max_iters}]", log_dict)


class WandbLoggerHook(LoggerHook):
    def __init__(self, init_kwargs=None, interval=10):
        super().__init__(interval)
        self.init_kwargs, self.wandb = init_kwargs or {}, None

    @master_only
    def before_run(self, runner):
        super().before_run(runner)
        import wandb
        self.wandb = wandb
        wandb.init(**self.init_kwargs)

    @master_only
    def log(self, runner):
        self.wandb.log({k: v for k, v in runner.log_buffer.output.items() if k != "time"}, step=runner.iter + 1)

    @master_only
    def after_run(self, runner):
        self.wandb.finish()
