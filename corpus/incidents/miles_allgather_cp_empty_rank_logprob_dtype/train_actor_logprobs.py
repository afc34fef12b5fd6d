"""GRPO actor step of miles with allgather context parallelism (each CP rank holds one contiguous
half of the packed rollout sequence) and model-precision policy logits: the actor scores the rollout
tokens, gets per-token log-probs through the loss hub, and takes a clipped policy-gradient step.
Launched with `torchrun --nproc_per_node 2 train_actor_logprobs.py --context-parallel-size 2 ...`.

Thread: https://github.com/radixark/miles/pull/2827 ("fix(loss): return fp32 empty log-probs from
the chunked path"; closed as "Folded into #2818", with the regression tests in radixark/miles#2826)
Project: radixark/miles (miles/backends/training_utils: loss_hub/math_utils.py,
loss_hub/logit_processors.py, cp_utils.py)
What failed: "With model-precision logits (#2764/#2818), a CP rank whose contiguous half holds no
response logits returns its empty log-probs as `logits.new_zeros((0,))` -- in bf16/fp16 -- while
every other rank returns fp32 CE outputs. The dtype leaks through `allgather_cp_redistribute`
(`zeros(dtype=value.dtype)`) into the cross-rank `dist.nn.all_reduce`, and the byte-size mismatch
crashes the collective" (gloo: "op.preamble.length <= op.nbytes. 24 vs 12. Received data size
doesn't match expected size."); "Reachable with allgather-CP + bf16 whenever one rank's half contains
only prompt tokens (long prompts)". On NCCL the ranks enter the same all-reduce with buffers of
different dtypes and byte sizes.
Fix (the PR, folded into #2818): the chunked (non-true-on-policy) path pins the empty log-probs and
entropy to fp32, `logits.new_zeros((0,), dtype=torch.float32)`, "matching the dtype the fused CE
produces on non-empty ranks".
Expected rankcheck finding: RC104 on the `dist.nn.all_reduce(all_cat, group=cp.group)` in
allgather_cp_redistribute (miles_lite/training_utils/cp_utils.py): the tensor's dtype is bf16 on a
rank whose chunk holds no response token and fp32 on the others.
Inferred: the policy model, the rollout file format and the loss are written for this
reconstruction; TP is 1 (so the vocab-parallel cross-entropy is a local log-softmax) and the
allgather-CP attention is reduced to scoring the full packed sequence and keeping this rank's
contiguous chunk of the logits.
"""
import argparse
import json

import torch
import torch.distributed as dist
from transformers import AutoModelForCausalLM

from miles_lite.training_utils.loss_hub.logit_processors import get_log_probs_and_entropy
from miles_lite.training_utils.parallel import get_parallel_state, init_parallel_state


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hf-checkpoint", required=True)
    parser.add_argument("--rollout-path", required=True)
    parser.add_argument("--context-parallel-size", type=int, default=2)
    parser.add_argument("--allgather-cp", action="store_true", default=True)
    parser.add_argument("--bf16", action="store_true", default=True)
    parser.add_argument("--log-probs-chunk-size", type=int, default=1024)
    parser.add_argument("--rollout-temperature", type=float, default=1.0)
    parser.add_argument("--eps-clip", type=float, default=0.2)
    parser.add_argument("--entropy-coef", type=float, default=0.0)
    parser.add_argument("--lr", type=float, default=1e-6)
    return parser.parse_args()


def load_rollout_batches(path, dp_rank, dp_size):
    with open(path) as fh:
        batches = [json.loads(line) for line in fh]
    return batches[dp_rank::dp_size]


def policy_loss(log_probs, old_log_probs, advantages, eps_clip):
    ratio = torch.exp(log_probs - old_log_probs)
    clipped = torch.clamp(ratio, 1.0 - eps_clip, 1.0 + eps_clip)
    return -torch.min(ratio * advantages, clipped * advantages).mean()


def train_step(args, model, optimizer, batch):
    cp = get_parallel_state().cp
    device = torch.cuda.current_device()
    unconcat_tokens = [torch.tensor(sample["tokens"], device=device) for sample in batch["samples"]]
    total_lengths = [len(sample["tokens"]) for sample in batch["samples"]]
    response_lengths = [sample["response_length"] for sample in batch["samples"]]

    packed = torch.cat(unconcat_tokens)
    pad = (-packed.numel()) % cp.size
    packed = torch.nn.functional.pad(packed, (0, pad))
    # policy logits stay in model precision (fp32_output=False); chunks are upcast in the loss hub
    logits = model(input_ids=packed.unsqueeze(0)).logits
    local_len = packed.numel() // cp.size
    logits = logits[:, cp.rank * local_len : (cp.rank + 1) * local_len]

    res = get_log_probs_and_entropy(
        logits,
        args=args,
        unconcat_tokens=unconcat_tokens,
        total_lengths=total_lengths,
        response_lengths=response_lengths,
        with_entropy=args.entropy_coef > 0,
    )
    losses = []
    for idx, log_probs in enumerate(res["log_probs"]):
        sample = batch["samples"][idx]
        old = torch.tensor(sample["old_log_probs"], device=device, dtype=torch.float32)[: log_probs.numel()]
        adv = torch.full_like(old, sample["advantage"])
        losses.append(policy_loss(log_probs.float(), old, adv, args.eps_clip))
    loss = torch.stack(losses).mean()
    if args.entropy_coef > 0:
        loss = loss - args.entropy_coef * torch.cat(res["entropy"]).mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    # data-parallel gradient averaging (every parameter of the causal LM receives a gradient)
    for p in model.parameters():
        dist.all_reduce(p.grad, group=get_parallel_state().dp.group, op=dist.ReduceOp.AVG)
    optimizer.step()
    return loss.detach()


def main():
    args = parse_args()
    dist.init_process_group("nccl")
    torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
    state = init_parallel_state(args.context_parallel_size)
    model = AutoModelForCausalLM.from_pretrained(args.hf_checkpoint, torch_dtype=torch.bfloat16).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step, batch in enumerate(load_rollout_batches(args.rollout_path, state.dp.rank, state.dp.size)):
        loss = train_step(args, model, optimizer, batch)
        if dist.get_rank() == 0:
            print(f"step {step}: loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
