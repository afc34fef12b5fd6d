"""A callback's `setup` saves the run's config once: it returns early when it already saved,
then meets the other ranks in a barrier before rank 0 writes. The flag is set inside the rank-0
block, so on the next `setup` (a `fit` followed by a `test`) rank 0 returns at once while the
other ranks, whose flag is still False, wait in the barrier (LightningCLI's SaveConfigCallback,
Lightning#12230). Look-alike: safe_callback_returns_on_a_flag_every_rank_sets.py.
"""
import torch.distributed as dist


class SaveConfigCallback:
    def __init__(self, config, path):
        self.config = config
        self.path = path
        self.already_saved = False

    def setup(self, trainer, stage):
        if self.already_saved:
            return  # expect: RC102
        dist.barrier()
        if dist.get_rank() == 0:
            with open(self.path, "w") as out:
                out.write(str(self.config))
            self.already_saved = True
