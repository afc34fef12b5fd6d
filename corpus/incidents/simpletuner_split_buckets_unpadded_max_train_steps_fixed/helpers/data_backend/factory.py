"""Builds the data backends listed in --data_backend_config (trimmed configure_multi_databackend)."""
import json
import logging
import os

import torch
from torch.utils.data import DataLoader, Dataset

from helpers.metadata.backends.base import MetadataBackend
from helpers.multiaspect.sampler import MultiAspectSampler
from helpers.training.state_tracker import StateTracker

logger = logging.getLogger("DataBackendFactory")


class CachedLatentDataset(Dataset):
    """Reads the VAE latents and text embeds cached for each image of a batch."""

    def __init__(self, id, cache_dir):
        self.id = id
        self.cache_dir = cache_dir

    def __len__(self):
        return 0  # indexed through the sampler's batches only

    def __getitem__(self, image_paths):
        latents, embeds = [], []
        for path in image_paths:
            stem = os.path.splitext(os.path.basename(path))[0]
            latents.append(torch.load(os.path.join(self.cache_dir, "vae", f"{stem}.pt")))
            embeds.append(torch.load(os.path.join(self.cache_dir, "text", f"{stem}.pt")))
        return {"latent_batch": torch.stack(latents), "prompt_embeds": torch.stack(embeds)}


def configure_multi_databackend(args, accelerator):
    with open(args.data_backend_config) as fh:
        backend_configs = json.load(fh)

    for backend in backend_configs:
        if backend.get("disabled", False):
            continue
        init_backend = {"id": backend["id"], "config": backend}
        init_backend["metadata_backend"] = MetadataBackend(
            id=backend["id"],
            instance_data_dir=backend["instance_data_dir"],
            cache_file=os.path.join(backend["cache_dir"], "aspect_ratio_bucket_indices.json"),
            accelerator=accelerator,
            batch_size=args.train_batch_size,
            repeats=backend.get("repeats", 0),
        )

        if accelerator.is_local_main_process:
            logger.info(f"(id={backend['id']}) Refreshing aspect buckets on main process.")
            init_backend["metadata_backend"].refresh_buckets()
        accelerator.wait_for_everyone()
        if not accelerator.is_main_process:
            init_backend["metadata_backend"].reload_cache()
        accelerator.wait_for_everyone()
        if init_backend["metadata_backend"].has_single_underfilled_bucket():
            raise Exception(
                f"Cannot train using a dataset that has a single bucket with fewer than {args.train_batch_size} images."
            )

        # In the case where max_train_steps is not given and num_train_epochs is being used, padding
        # is applied so that every process operates on the same number of images; without it the
        # recalculated max_train_steps may differ between processes and training hangs near the end.
        apply_padding = True if not args.max_train_steps or args.max_train_steps == 0 else False

        # Now split the contents of these buckets between all processes
        init_backend["metadata_backend"].split_buckets_between_processes(
            gradient_accumulation_steps=args.gradient_accumulation_steps,
            apply_padding=apply_padding,
        )

        init_backend["sampler"] = MultiAspectSampler(
            id=backend["id"],
            metadata_backend=init_backend["metadata_backend"],
            batch_size=args.train_batch_size,
            seed=args.seed,
        )
        init_backend["train_dataset"] = CachedLatentDataset(backend["id"], backend["cache_dir"])
        init_backend["train_dataloader"] = DataLoader(
            init_backend["train_dataset"],
            batch_size=None,
            sampler=init_backend["sampler"],
            num_workers=0,
        )
        StateTracker.register_data_backend(init_backend)

    if len(StateTracker.get_data_backends()) == 0:
        raise ValueError("Must provide at least one data backend in the data backend config file.")


def random_dataloader_iterator(step, backends: dict):
    """Draws the next batch from a randomly chosen, not yet exhausted backend; False at epoch end."""
    while backends:
        backend_id = sorted(backends)[step % len(backends)]
        try:
            return next(backends[backend_id])
        except StopIteration:
            StateTracker.backend_exhausted(backend_id)
            del backends[backend_id]
    return False
