"""Safe twin of automodel_local_rank0_weight_download_skips_gloo_barrier.

Thread: https://github.com/NVIDIA-NeMo/Automodel/pull/991
Fix applied (the merged PR): _download_model_weights no longer tests the local rank; every
rank that needs the weights (the path is not a local directory -- the same answer on every
rank) enters FirstRankPerNode, so rank 0 downloads first while the others wait in the
context's barrier, and all ranks make the same new_group/monitored_barrier calls.
"""

import logging
import os

import torch
from transformers import AutoConfig, AutoModelForCausalLM

from nemo_lite.distributed import utils as dist_utils
from nemo_lite.distributed.init_utils import get_local_world_size_preinit, get_world_size_safe
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
    if not os.path.isdir(pretrained_model_name_or_path):
        nodes = get_world_size_safe() // max(get_local_world_size_preinit(), 1)
        if nodes > 1:
            logger.info(
                "downloading %s on each of %d nodes; pre-download it once and pass the path to save storage",
                pretrained_model_name_or_path,
                nodes,
            )
        with dist_utils.FirstRankPerNode():
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
