"""get_model_processor: resolve a checkpoint directory into (model, processor).

With ``return_dummy_model=True`` no weights are read: the architecture is instantiated from the
config (on whatever default device the caller set, usually ``meta``).  Models that ship their own
modeling code (``auto_map`` in config.json, e.g. MiniMax) go through transformers' dynamic-module
loader, which this project guards with ``safe_ddp_context`` so that only one process per node
copies and imports the remote code at a time.
"""
import json
import os
from typing import Optional, Tuple

from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

from .dist_utils import safe_ddp_context


def _has_remote_code(model_dir: str) -> bool:
    config_file = os.path.join(model_dir, "config.json")
    if not os.path.isfile(config_file):
        return False
    with open(config_file, "r", encoding="utf-8") as f:
        return "auto_map" in json.load(f)


def _load_config(model_dir: str):
    if _has_remote_code(model_dir):
        # the dynamic module cache is shared by every process of the node
        with safe_ddp_context(hash_id=str(model_dir)):
            return AutoConfig.from_pretrained(model_dir, trust_remote_code=True)
    return AutoConfig.from_pretrained(model_dir)


def get_model_processor(
    model_dir: str,
    model_type: Optional[str] = None,
    return_dummy_model: bool = False,
    load_model: bool = True,
) -> Tuple[object, object]:
    config = _load_config(model_dir)
    if model_type is not None:
        setattr(config, "swift_model_type", model_type)
    processor = AutoTokenizer.from_pretrained(model_dir, trust_remote_code=True)
    model = None
    if load_model:
        if return_dummy_model:
            model = AutoModelForCausalLM.from_config(config, trust_remote_code=True)
        else:
            model = AutoModelForCausalLM.from_pretrained(model_dir, config=config, trust_remote_code=True)
    if model is not None:
        model.model_dir = model_dir
    return model, processor
