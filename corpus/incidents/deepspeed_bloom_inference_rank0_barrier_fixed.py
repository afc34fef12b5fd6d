"""Safe twin of deepspeed_bloom_inference_rank0_barrier.py: rank 0 writes the checkpoints JSON and
every rank then meets in the barrier.

Thread: https://github.com/huggingface/transformers-bloom-inference/pull/40
"""
import argparse
import gc
import io
import json
import os
from pathlib import Path

import deepspeed
import torch
import torch.distributed as dist
from huggingface_hub import snapshot_download
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", required=False, type=int, help="used by dist launchers")
parser.add_argument("--name", type=str, help="Name path", required=True)
parser.add_argument("--batch_size", default=1, type=int, help="batch size")
parser.add_argument("--dtype", type=str, default="float16", choices=["int8", "float16"])
args = parser.parse_args()

local_rank = int(os.getenv("LOCAL_RANK", "0"))
world_size = int(os.getenv("WORLD_SIZE", "1"))
deepspeed.init_distributed("nccl")
rank = dist.get_rank()


def print_rank0(*msg):
    if rank != 0:
        return
    print(*msg)


def get_repo_root(model_name_or_path):
    if rank == 0:
        snapshot_download(model_name_or_path, allow_patterns=["*"], ignore_patterns=["*.safetensors"])
    dist.barrier()
    return snapshot_download(model_name_or_path, allow_patterns=["*"], ignore_patterns=["*.safetensors"], local_files_only=True)


def get_checkpoint_files(model_name_or_path):
    cached_repo_dir = get_repo_root(model_name_or_path)
    return [str(entry) for entry in Path(cached_repo_dir).rglob("*.[bp][it][n]") if entry.is_file()]


def write_checkpoints_json(checkpoints_json):
    checkpoint_files = get_checkpoint_files(args.name)
    if rank == 0:
        data = {"type": "BLOOM", "checkpoints": checkpoint_files, "version": 1.0}
        with io.open(checkpoints_json, "w", encoding="utf-8") as f:
            json.dump(data, f)
    dist.barrier()


tokenizer = AutoTokenizer.from_pretrained(args.name)
config = AutoConfig.from_pretrained(args.name)
dtype = torch.bfloat16 if args.dtype == "int8" else torch.float16
with deepspeed.OnDevice(dtype=dtype, device="meta"):
    model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16)
model = model.eval()

checkpoints_json = "checkpoints.json"
write_checkpoints_json(checkpoints_json)
model = deepspeed.init_inference(
    model, mp_size=world_size, dtype=getattr(torch, args.dtype), checkpoint=checkpoints_json, replace_with_kernel_inject=True
)
model = model.module
gc.collect()
print_rank0(f"*** Loaded {args.name} on {world_size} GPUs")
