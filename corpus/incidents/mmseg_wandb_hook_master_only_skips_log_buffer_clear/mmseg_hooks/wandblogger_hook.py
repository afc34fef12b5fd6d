"""Enhanced Weights & Biases logger hook of the segmentation codebase (as
mmseg.core.hook.MMSegWandbHook before mmsegmentation#2398): logs the metrics and, every checkpoint
interval, the checkpoint as a W&B artifact.

Thread: https://github.com/open-mmlab/mmsegmentation/issues/2137 (fix:
https://github.com/open-mmlab/mmsegmentation/pull/2398). The whole `after_train_iter` is
`@master_only`, including the base-class call that clears the shared log buffer; see
mmcv_lite/logger_hooks.py for where the ranks then part.
"""
import os.path as osp

from mmcv_lite.runner import master_only
from mmcv_lite.logger_hooks import WandbLoggerHook


class MMSegWandbHook(WandbLoggerHook):
    def __init__(self, init_kwargs=None, interval=50, log_checkpoint=False, ckpt_interval=4000):
        super().__init__(init_kwargs, interval)
        self.log_checkpoint, self.ckpt_interval = log_checkpoint, ckpt_interval

    @master_only
    def before_run(self, runner):
        super().before_run(runner)

    @master_only
    def after_train_iter(self, runner):
        if runner.mode == "train":
            # The iter-based eval hook calls `after_train_iter` of all logger hooks before
            # evaluation; do not call the base method twice, it clears the log buffer.
            return super().after_train_iter(runner)
        super().after_train_iter(runner)
        if self.log_checkpoint and self.every_n_iters(runner, self.ckpt_interval):
            model_path = osp.join(runner.work_dir, f"iter_{runner.iter + 1}.pth")
            artifact = self.wandb.Artifact(f"run_{self.wandb.run.id}_model", type="model")
            artifact.add_file(model_path)
            self.wandb.log_artifact(artifact, aliases=[f"iter_{runner.iter + 1}", "latest"])
