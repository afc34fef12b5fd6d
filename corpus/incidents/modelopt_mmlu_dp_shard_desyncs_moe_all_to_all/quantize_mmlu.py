"""Post-training quantization of a Megatron-Core MoE checkpoint with ModelOpt, gated by a quick MMLU
run: quantize (NVFP4), evaluate a fraction of MMLU with batched prefill scoring, fail the job if the
accuracy drops below a threshold, then export.

Launched with torchrun on one node, e.g. `--ep 4 --tp 1 --pp 1` on 4 GPUs: every rank is both an
expert-parallel peer and a dense data-parallel rank.

The MMLU evaluation lives in mmlu_gate/mmlu.py (see the docstring there for the thread and the
finding); the forward it runs per batch is in mmlu_gate/prefill.py.
"""
import argparse
import os

import modelopt.torch.quantization as mtq
import torch
import torch.distributed as dist
from torch.utils.data.distributed import DistributedSampler
from megatron.core import parallel_state as mpu
from transformers import AutoTokenizer

from mmlu_gate.model_builder import build_moe_model, load_checkpoint
from mmlu_gate.mmlu import megatron_mmlu
from mmlu_gate.prefill import megatron_prefill


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", required=True, help="Megatron dist checkpoint directory")
    parser.add_argument("--tokenizer", required=True, help="HF tokenizer name or path")
    parser.add_argument("--export-dir", required=True)
    parser.add_argument("--tp", type=int, default=1)
    parser.add_argument("--pp", type=int, default=1)
    parser.add_argument("--ep", type=int, default=1)
    parser.add_argument("--num-experts", type=int, default=128)
    parser.add_argument("--calib-size", type=int, default=512)
    parser.add_argument("--calib-batch-size", type=int, default=4)
    parser.add_argument("--mmlu-fraction", type=float, default=0.05)
    parser.add_argument("--mmlu-batch-size", type=int, default=8)
    parser.add_argument("--mmlu-threshold", type=float, default=0.6)
    parser.add_argument("--quant-cfg", default="NVFP4_DEFAULT_CFG")
    return parser.parse_args()


def calibration_prompts(tokenizer, n):
    from datasets import load_dataset

    ds = load_dataset("cnn_dailymail", "3.0.0", split="train")
    texts = [row["article"][:2048] for row in ds.select(range(n))]
    return [tokenizer(t, return_tensors="pt").input_ids[0] for t in texts]


def make_forward_loop(prompts, batch_size):
    # DistributedSampler pads the index list, so every DP rank calibrates on the same number of prompts
    sampler = DistributedSampler(range(len(prompts)), num_replicas=mpu.get_data_parallel_world_size(),
                                 rank=mpu.get_data_parallel_rank(), shuffle=False)
    shard = [prompts[i] for i in sampler]

    def forward_loop(model):
        for start in range(0, len(shard), batch_size):
            chunk = shard[start : start + batch_size]
            longest = max(p.shape[0] for p in chunk)
            ids = torch.zeros(len(chunk), longest, dtype=torch.long)
            for i, p in enumerate(chunk):
                ids[i, : p.shape[0]] = p
            megatron_prefill(model, ids.cuda(), skip_return_logits=True)

    return forward_loop


def main():
    args = parse_args()
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    mpu.initialize_model_parallel(
        tensor_model_parallel_size=args.tp,
        pipeline_model_parallel_size=args.pp,
        expert_model_parallel_size=args.ep,
    )

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    model = build_moe_model(num_experts=args.num_experts, vocab_size=len(tokenizer),
                            tp=args.tp, pp=args.pp, ep=args.ep)
    load_checkpoint(model, args.checkpoint)

    prompts = calibration_prompts(tokenizer, args.calib_size)
    quant_cfg = getattr(mtq, args.quant_cfg)
    model = mtq.quantize(model, quant_cfg, make_forward_loop(prompts, args.calib_batch_size))

    accuracy = megatron_mmlu(model, tokenizer, fraction=args.mmlu_fraction, batch_size=args.mmlu_batch_size)
    if accuracy < args.mmlu_threshold:
        raise RuntimeError(f"MMLU gate failed: {accuracy:.3f} < {args.mmlu_threshold}")

    from megatron.core import dist_checkpointing

    dist_checkpointing.save(model.sharded_state_dict(), args.export_dir)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
