# Copyright 2021 MosaicML. All Rights Reserved.
#
# Trimmed for the incident corpus: the loading half of composer/trainer/checkpoint.py as it stood
# before mosaicml/composer#334 (object-store download, archive extraction, the node barrier and the
# restore of the trainer state).

import logging
import os
import tarfile
import tempfile
import urllib.parse
from typing import Optional

import requests
import torch
import tqdm

from composer.core.state import State
from composer.utils import ObjectStoreProvider, dist, reproducibility

log = logging.getLogger(__name__)

_MOSAIC_STATES_FILENAME = "mosaic_states.pt"


class CheckpointLoader:
    """Loads a checkpoint (a local path, a URL, or an object-store key) into the trainer state.

    Args:
        path: the checkpoint, formatted with ``{rank}`` for per-rank (DeepSpeed) checkpoints.
        object_store: where ``path`` is looked up, if not local.
        load_weights_only: restore only the model weights.
        strict_model_weights: passed to ``load_state_dict``.
        chunk_size, progress_bar: download options.
    """

    def __init__(
        self,
        path: str,
        object_store: Optional[ObjectStoreProvider] = None,
        load_weights_only: bool = False,
        strict_model_weights: bool = False,
        chunk_size: int = 1_048_576,
        progress_bar: bool = True,
    ):
        self.path = path
        self.object_store = object_store
        self.load_weights_only = load_weights_only
        self.strict_model_weights = strict_model_weights
        self.chunk_size = chunk_size
        self.progress_bar = progress_bar
        self.checkpoint_rng_state = None

    def _retrieve_checkpoint(self, destination_filepath: str, rank: int, ignore_not_found_errors: bool):
        checkpoint_name = self.path.format(rank=rank)
        if self.object_store is not None:
            try:
                total_size_in_bytes = self.object_store.get_object_size(checkpoint_name)
            except Exception as e:
                if "ObjectDoesNotExistError" in str(e) and ignore_not_found_errors:
                    return
                raise
            self._report_download(total_size_in_bytes)
            with open(destination_filepath, "wb") as fp:
                for chunk in self.object_store.download_object_as_stream(checkpoint_name, chunk_size=self.chunk_size):
                    fp.write(chunk)
            return

        if urllib.parse.urlparse(checkpoint_name).scheme in ("http", "https"):
            with requests.get(checkpoint_name, stream=True) as r:
                if r.status_code == 404 and ignore_not_found_errors:
                    return
                r.raise_for_status()
                total = int(r.headers.get("content-length", 0))
                with open(destination_filepath, "wb") as fp, tqdm.tqdm(
                    total=total, unit="iB", unit_scale=True, disable=not self.progress_bar
                ) as bar:
                    for data in r.iter_content(chunk_size=self.chunk_size):
                        bar.update(len(data))
                        fp.write(data)
            return

        if not os.path.exists(checkpoint_name):
            if ignore_not_found_errors:
                return
            raise FileNotFoundError(f"Checkpoint {checkpoint_name} does not exist")
        os.symlink(os.path.abspath(checkpoint_name), destination_filepath)

    def _report_download(self, total_size_in_bytes: int):
        log.info("Downloading checkpoint %s (%d bytes)", self.path, total_size_in_bytes)

    def _get_node_checkpoint_download_folder(self, path: Optional[str]) -> str:
        # every process of a node must agree on the folder, so local rank 0 creates it and shares it
        if dist.get_local_rank() == 0:
            if path is None:
                path = tempfile.mkdtemp()
            os.makedirs(path, exist_ok=True)
        paths = dist.all_gather_object(path)
        return paths[dist.get_global_rank() - dist.get_local_rank()]

    def _download_checkpoint(self, node_checkpoint_folder: str):
        checkpoint_archive_name = self.path.split(os.path.sep)[-1]
        rank_zero_checkpoint_archive_name = "rank_0." + checkpoint_archive_name.format(rank=0)
        rank_n_checkpoint_archive_name = f"rank_{dist.get_global_rank()}." + checkpoint_archive_name.format(
            rank=dist.get_global_rank()
        )
        rank_zero_checkpoint_archive_filepath = os.path.join(node_checkpoint_folder, rank_zero_checkpoint_archive_name)
        rank_n_checkpoint_archive_filepath = os.path.join(node_checkpoint_folder, rank_n_checkpoint_archive_name)
        extracted_checkpoint_folder = None
        if rank_zero_checkpoint_archive_filepath.endswith(".tar"):
            extracted_checkpoint_folder = os.path.join(node_checkpoint_folder, "checkpoint")
            mosaic_checkpoint_filepath = os.path.join(extracted_checkpoint_folder, _MOSAIC_STATES_FILENAME)
        else:
            mosaic_checkpoint_filepath = rank_zero_checkpoint_archive_filepath

        try:
            if dist.get_local_rank() == 0:
                # every NODE needs the GLOBAL rank zero checkpoint
                self._retrieve_checkpoint(
                    destination_filepath=rank_zero_checkpoint_archive_filepath,
                    rank=dist.get_global_rank(),
                    ignore_not_found_errors=False,
                )
                if extracted_checkpoint_folder is not None:
                    try:
                        with tarfile.open(rank_zero_checkpoint_archive_filepath) as tarball:
                            tarball.extractall(extracted_checkpoint_folder)
                    except FileNotFoundError as e:
                        checkpoint_name = self.path.format(rank=dist.get_global_rank())
                        raise RuntimeError(f"Unable to retrieve checkpoint {checkpoint_name}") from e

            if rank_zero_checkpoint_archive_filepath != rank_n_checkpoint_archive_filepath:
                # every RANK needs ITS OWN checkpoint; rank-local files may not exist (no DeepSpeed)
                self._retrieve_checkpoint(
                    destination_filepath=rank_n_checkpoint_archive_filepath,
                    rank=dist.get_global_rank(),
                    ignore_not_found_errors=True,
                )
                if extracted_checkpoint_folder is not None and os.path.exists(rank_n_checkpoint_archive_filepath):
                    with tarfile.open(rank_n_checkpoint_archive_filepath) as tarball:
                        tarball.extractall(extracted_checkpoint_folder)
        finally:
            # Wait for all checkpoints on the node to finish downloading; every rank reaches the barrier,
            # even one whose download raised, and any exception is re-raised after it passes.
            dist.barrier()

        return mosaic_checkpoint_filepath, extracted_checkpoint_folder

    def _restore_checkpoint(self, state: State, mosaic_checkpoint_filepath: str) -> Optional[int]:
        state_dict = torch.load(mosaic_checkpoint_filepath, map_location="cpu")
        if self.load_weights_only:
            state.load_model_state(state_dict["state"], strict=self.strict_model_weights)
            return None
        state.load_state_dict(state_dict["state"])
        self.checkpoint_rng_state = self._get_checkpoint_rng_state(state_dict["rng"])
        return state_dict.get("seed")

    def _get_checkpoint_rng_state(self, checkpoint_rng_state):
        original_world_size = len(checkpoint_rng_state)
        if original_world_size == dist.get_world_size():
            return checkpoint_rng_state[dist.get_global_rank()]
        log.warning("The checkpoint was saved with a different world size; RNG state is not restored.")
        return None

    def load_checkpoint(self, state: State, node_checkpoint_folder: Optional[str] = None) -> Optional[int]:
        """Downloads the checkpoint on each node, restores ``state`` from it and returns its seed."""
        node_checkpoint_folder = self._get_node_checkpoint_download_folder(node_checkpoint_folder)
        mosaic_checkpoint_filepath, _ = self._download_checkpoint(node_checkpoint_folder)
        seed_to_restore = self._restore_checkpoint(state, mosaic_checkpoint_filepath)
        if seed_to_restore is not None:
            reproducibility.seed_all(seed_to_restore)
        log.info("Checkpoint loaded from %s", self.path)
        return seed_to_restore
