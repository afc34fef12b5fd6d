"""DataLoader builder for the ESPnet3 trainer (espnet3/components/data/dataloader.py), trimmed to
the espnet2 iter-factory path: the batch sampler's batches are cut to a multiple of the world size
and strided over the ranks, and the factory's per-epoch iterator is handed to Lightning."""
import copy
import logging

import torch
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from espnet2.samplers.build_batch_sampler import build_batch_sampler

logger = logging.getLogger(__name__)


class DataLoaderBuilder:
    def __init__(self, dataset, config, collate_fn, num_device: int, epoch: int):
        self.dataset = dataset
        self.config = config
        self.collate_fn = collate_fn
        self.num_device = num_device
        self.epoch = epoch

    def build(self, mode: str):
        mode_config = getattr(self.config.dataloader, mode, DictConfig({}))
        config = copy.copy(mode_config)
        factory_config = OmegaConf.to_container(config.iter_factory, resolve=True)
        return self._build_iter_factory(factory_config, mode=mode)

    def _build_iter_factory(self, factory_config, mode="train"):
        batches = build_batch_sampler(**factory_config.pop("batches"))

        if self.num_device > 1:
            batches = list(batches)
            world_size = torch.distributed.get_world_size()
            rank = torch.distributed.get_rank()
            total_batches = len(batches)
            remainder = total_batches % world_size
            if remainder != 0:
                # Drop tail batches so each rank sees the same number of batches.
                # This avoids DDP barrier deadlocks when per-rank batch counts differ.
                keep = total_batches - remainder
                logger.warning("[%s] Dropping %s tail batches to align with world_size=%s",
                               mode, remainder, world_size)
                batches = batches[:keep]
            # Each rank takes every world_size-th whole batch (one utterance each for the
            # chunk iterator, which then cuts it into a data-dependent number of chunks).
            batches = batches[rank::world_size]
            logger.info("[%s] distributed batches: world_size=%s, rank=%s, per_rank=%s",
                        mode, world_size, rank, len(batches))

        iter_factory = instantiate(factory_config, self.dataset, batches=batches,
                                   collate_fn=self.collate_fn)
        # espnet2 iter factories count epochs from 1
        return iter_factory.build_iter(self.epoch + 1)
