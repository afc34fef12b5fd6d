"""ESPnet3 LightningModule (espnet3/components/modeling/lightning_module.py), trimmed: the shared
train/valid step with the distributed NaN/Inf loss skip, and the dataloader hooks that build the
espnet2 iterators through DataLoaderBuilder for the current epoch."""
import logging

import lightning
import torch
from hydra.utils import instantiate
from omegaconf import OmegaConf

from espnet3_lite.data import DataLoaderBuilder
from espnet3_lite.data.chunk_iter_factory import collate_chunks

logger = logging.getLogger("lightning")


class ESPnetLightningModule(lightning.LightningModule):
    def __init__(self, model, config):
        super().__init__()
        self.config = config
        self.model = model
        data_organizer = instantiate(config.dataset)
        self.train_dataset = data_organizer.train
        self.valid_dataset = data_organizer.valid
        self.nan_countdown = 0
        self.collate_fn = collate_chunks

    def _sync2skip(self, flag_skip):
        """Synchronize a skip flag across all DDP workers (gather it and reduce it with `or`)."""
        if self.config.num_device == 1:
            any_invalid = flag_skip
        else:
            world_size = torch.distributed.get_world_size()
            torch.distributed.barrier()

            result = [torch.zeros_like(flag_skip) for _ in range(world_size)]
            torch.distributed.all_gather(result, flag_skip)

            any_invalid = torch.sum(torch.stack(result)).bool().item()
        return any_invalid

    def _check_nan_inf_loss(self, loss, batch_id):
        mask_nan_inf = torch.logical_or(torch.isnan(loss), ~torch.isfinite(loss))
        if torch.any(mask_nan_inf):
            # if any is invalid then we must flag this to all DDP processes
            flag_skip = torch.ones((), device=loss.device, dtype=torch.bool)
        else:
            flag_skip = torch.zeros((), device=loss.device, dtype=torch.bool)

        any_invalid = self._sync2skip(flag_skip)
        if any_invalid:
            if self.nan_countdown >= 100:
                raise RuntimeError("Too many NaNs loss iterations encountered, stopping!")
            logger.warning(f"NaN loss in batch {batch_id} of epoch {self.current_epoch}, "
                           f"skipping the whole batch across all workers.")
            self.nan_countdown += 1
        else:
            self.nan_countdown = 1
        return any_invalid

    def _step(self, batch, batch_idx, mode):
        # loss is averaged over samples within a mini-batch; weight is batch size
        loss, stats, weight = self.model(**batch[1])

        any_invalid = self._check_nan_inf_loss(loss, batch_idx)
        if any_invalid:
            # skip this batch altogether on all workers.
            return None

        new_stats = {f"{mode}/{k}": v.item() for k, v in stats.items() if v is not None}
        self.log_dict(
            new_stats, prog_bar=True, logger=True, sync_dist=(mode == "valid"), batch_size=weight.item()
        )
        return loss

    def training_step(self, batch, batch_idx):
        return self._step(batch, batch_idx, mode="train")

    def validation_step(self, batch, batch_idx):
        return self._step(batch, batch_idx, mode="valid")

    def configure_optimizers(self):
        params = filter(lambda p: p.requires_grad, self.parameters())
        optimizer = instantiate(OmegaConf.to_container(self.config.optimizer, resolve=True), params)
        scheduler = instantiate(OmegaConf.to_container(self.config.scheduler, resolve=True),
                                optimizer=optimizer)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    def train_dataloader(self):
        builder = DataLoaderBuilder(dataset=self.train_dataset, config=self.config,
                                    collate_fn=self.collate_fn, num_device=self.config.num_device,
                                    epoch=self.current_epoch)
        return builder.build(mode="train")

    def val_dataloader(self):
        builder = DataLoaderBuilder(dataset=self.valid_dataset, config=self.config,
                                    collate_fn=self.collate_fn, num_device=self.config.num_device,
                                    epoch=self.current_epoch)
        return builder.build(mode="valid")
