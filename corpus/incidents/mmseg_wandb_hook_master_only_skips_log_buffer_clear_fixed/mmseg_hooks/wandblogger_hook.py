"""Enhanced Weights & Biases logger hook of the segmentation codebase (as
mmseg.core.hook.MMSegWandbHook after mmsegmentation#2398).

Safe twin: as merged in https://github.com/open-mmlab/mmsegmentation/pull/2398, `after_train_iter`
runs the base logger hook on every rank (W&B's own `log` stays rank-0-only), so every rank clears
the shared log buffer; the W&B-specific work moves to a `@master_only` `_after_train_iter`.

Thread: https://github.com/open-mmlab/mmsegmentation/issues/2137
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

    # For the reason of this double-layered structure see open-mmlab/mmdetection#8145.
    def after_train_iter(self, runner):
        if runner.mode == "train":
            # The iter-based eval hook calls `after_train_iter` of all logger hooks before
            # evaluation; do not call the base method twice, it clears the log buffer.
            return super().after_train_iter(runner)
        super().after_train_iter(runner)
        self._after_train_iter(runner)

    @master_only
    def _after_train_iter(self, runner):
        if self.log_checkpoint and self.every_n_iters(runner, self.ckpt_interval):
            model_path = osp.join(runner.work_dir, f"iter_{runner.iter + 1}.pth")
            artifact = self.wandb.Artifact(f"run_{self.wandb.run.id}_model", type="model")
            artifact.add_file(model_path)
            self.wandb.log_artifact(artifact, aliases=[f"iter_{runner.iter + 1}", "latest"])
