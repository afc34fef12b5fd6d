"""Thread: https://github.com/NVIDIA-NeMo/Automodel/pull/991 ("fix: prevent hang in in download_model_weights")
Project: NVIDIA-NeMo/Automodel (NeMoAutoModelForCausalLM.from_pretrained, custom-model path)
What hung: for an architecture with an in-house implementation, from_pretrained calls
  _download_model_weights, which entered the FirstRankPerNode context only when
  `get_local_rank_preinit() == 0` (plus "not a local directory"). FirstRankPerNode is a
  world-wide handshake: its barrier helper creates a gloo group with dist.new_group (a
  collective of the whole default group) and then runs monitored_barrier on it. Only the
  node-local rank-0 processes reached it; global rank 0 sat in new_group inside __exit__
  (and, on a second node, its local rank 0 sat in the one in __enter__) while the other
  local ranks skipped the download, built the model and went into FSDP's first all-gather
  in finetune.py -- nobody ever completed either side.
Fix: the merged PR drops the local-rank test: every rank calls FirstRankPerNode (rank 0
  downloads first, the rest wait in its barrier and then hit the warm cache).
Expected rankcheck finding: RC101 on the `with dist_utils.FirstRankPerNode():` line below
  (a barrier reached through a helper in distributed/utils.py, under a LOCAL_RANK test).
Inferred: the PR has no description (title and diff only); the download body uses
  huggingface_hub.snapshot_download where Automodel calls transformers' private
  _get_resolved_checkpoint_files; the registry model is a small stand-in; the recipe in
  finetune.py (config, data, FSDP2 wrapping, loop) is invented around the call; the
  `quit(1)` Automodel's FirstRankPerNode issues on an exception is replaced by a log line.
"""

import logging
import os

import torch
import torch.distributed as dist
from transformers import AutoConfig, AutoModelForCausalLM

from nemo_lite.distributed import utils as dist_utils
from nemo_lite.distributed.init_utils import (
    get_local_rank_preinit,
    get_local_world_size_preinit,
    get_world_size_safe,
)
from nemo_lite.models.registry import ModelRegistry

logger = logging.getLogger(__name__)


def _fetch_checkpoint_files(repo_id: str, revision: str | None) -> str:
    from huggingface_hub import snapshot_download

    return snapshot_download(
        repo_id,
        revision=revision or "main",
        allow_patterns=["*.safetensors", "*.json", "*.model", "*.txt"],
    )


def _download_model_weights(hf_config, pretrained_model_name_or_path: str) -> None:
    """Make sure the checkpoint shards are in the local HF cache before the custom model loads them."""
    if (not dist.is_initialized() or get_local_rank_preinit() == 0) and not os.path.isdir(
        pretrained_model_name_or_path
    ):
        nodes = get_world_size_safe() // max(get_local_world_size_preinit(), 1)
        if nodes > 1:
            logger.info(
                "downloading %s on each of %d nodes; pre-download it once and pass the path to save storage",
                pretrained_model_name_or_path,
                nodes,
            )
        with dist_utils.FirstRankPerNode():  # expect: RC101
            _fetch_checkpoint_files(pretrained_model_name_or_path, getattr(hf_config, "_commit_hash", None))


def _load_custom_weights(model: torch.nn.Module, path: str) -> None:
    """Stand-in for the state-dict adapter that maps HF shard names onto the custom modules."""
    logger.info("loading weights for %s from %s", type(model).__name__, path)


class NeMoAutoModelForCausalLM:
    """Drop-in for AutoModelForCausalLM that prefers the in-house implementations."""

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: str, *, torch_dtype=torch.bfloat16,
                        force_hf: bool = False, trust_remote_code: bool = False, **kwargs):
        hf_config = AutoConfig.from_pretrained(pretrained_model_name_or_path, trust_remote_code=trust_remote_code)
        if force_hf:
            return AutoModelForCausalLM.from_pretrained(
                pretrained_model_name_or_path, torch_dtype=torch_dtype, **kwargs
            )
        architectures = list(getattr(hf_config, "architectures", None) or [])
        if architectures and architectures[0] in ModelRegistry.model_arch_name_to_cls:
            # custom implementation: it is built from the config, so fetch the weights ourselves
            _download_model_weights(hf_config, pretrained_model_name_or_path)
            model_cls = ModelRegistry.model_arch_name_to_cls[architectures[0]]
            logger.info("using the custom implementation of %s", architectures[0])
            model = model_cls(hf_config, **kwargs).to(torch_dtype)
            _load_custom_weights(model, pretrained_model_name_or_path)
            return model
        return AutoModelForCausalLM.from_pretrained(
            pretrained_model_name_or_path, torch_dtype=torch_dtype, trust_remote_code=trust_remote_code, **kwargs
        )
