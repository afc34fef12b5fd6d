"""Safe twin of modelopt_mmlu_dp_shard_desyncs_moe_all_to_all: the merged fix of
NVIDIA/Model-Optimizer#1967. With expert parallelism the batches are sharded over the
expert-data-parallel group, so the ranks of one EP group evaluate every batch in lockstep (their
prefill all-to-alls always pair up) and only expert-DP replicas take disjoint batches; dense models
(EP == 1) keep the data-parallel sharding.
"""
import torch
import torch.distributed as dist
from datasets import load_dataset
from megatron.core import parallel_state as mpu

from .prefill import megatron_prefill

CHOICES = ["A", "B", "C", "D"]


def _format_example(example, include_answer=True):
    prompt = example["question"]
    for choice, answer in zip(CHOICES, example["choices"]):
        prompt += f"\n{choice}. {answer}"
    if include_answer:
        return prompt + f"\nAnswer: {CHOICES[example['answer']]}\n\n"
    return prompt + "\nAnswer:"


def _build_prompts(fraction, few_shots, dataset_name):
    test = load_dataset(dataset_name, "all", split="test")
    dev = load_dataset(dataset_name, "all", split="dev") if few_shots else None
    shots = {}
    if dev is not None:
        for ex in dev:
            shots.setdefault(ex["subject"], []).append(ex)

    per_subject = {}
    for ex in test:
        per_subject[ex["subject"]] = per_subject.get(ex["subject"], 0) + 1

    taken = {}
    prompts, labels, subjects = [], [], []
    for ex in test:
        subj = ex["subject"]
        if taken.get(subj, 0) >= fraction * per_subject[subj]:
            continue
        taken[subj] = taken.get(subj, 0) + 1
        header = f"The following are multiple choice questions (with answers) about {subj.replace('_', ' ')}.\n\n"
        body = "".join(_format_example(s) for s in shots.get(subj, [])[:few_shots])
        prompts.append(header + body + _format_example(ex, include_answer=False))
        labels.append(CHOICES[ex["answer"]])
        subjects.append(subj)
    return prompts, labels, subjects


def megatron_mmlu(model, tokenizer, fraction=0.05, batch_size=1, few_shots=0, dataset_name="cais/mmlu"):
    choice_ids = [tokenizer.encode(f" {c}", add_special_tokens=False)[-1] for c in CHOICES]
    prompts, labels, subjects = _build_prompts(fraction, few_shots, dataset_name)

    # sort by length so the batches carry little padding
    encoded = [tokenizer(p, return_tensors="pt").input_ids[0] for p in prompts]
    order = sorted(range(len(encoded)), key=lambda i: encoded[i].shape[0], reverse=True)

    # With expert parallelism the prefill runs an expert all-to-all over the EP group, so the ranks
    # of one EP group must evaluate the same batches: shard over expert-DP replicas only.
    if mpu.get_expert_model_parallel_world_size() > 1:
        dp_size = mpu.get_expert_data_parallel_world_size()
        dp_rank = mpu.get_expert_data_parallel_rank()
        dp_group = mpu.get_expert_data_parallel_group()
    else:
        dp_size = mpu.get_data_parallel_world_size()
        dp_rank = mpu.get_data_parallel_rank()
        dp_group = mpu.get_data_parallel_group()

    predictions = [None] * len(encoded)
    for batch_idx, start in enumerate(range(0, len(order), batch_size)):
        if batch_idx % dp_size != dp_rank:
            continue
        idxs = order[start : start + batch_size]
        lengths = [encoded[i].shape[0] for i in idxs]
        padded = torch.zeros(len(idxs), max(lengths), dtype=torch.long)
        for row, i in enumerate(idxs):
            padded[row, : lengths[row]] = encoded[i]

        logits = megatron_prefill(model, padded.cuda())
        for row, i in enumerate(idxs):
            scores = logits[row, lengths[row] - 1, choice_ids]
            predictions[i] = CHOICES[scores.argmax().item()]

    names = sorted(set(subjects))
    index = {s: k for k, s in enumerate(names)}
    correct = torch.zeros(len(names), dtype=torch.long, device="cuda")
    total = torch.zeros(len(names), dtype=torch.long, device="cuda")
    for pred, label, subj in zip(predictions, labels, subjects):
        if pred is None:
            continue
        total[index[subj]] += 1
        correct[index[subj]] += int(pred == label)
    if dp_size > 1:
        dist.all_reduce(correct, group=dp_group)
        dist.all_reduce(total, group=dp_group)

    accuracy = (correct.sum() / total.sum()).item()
    if dist.get_rank() == 0:
        for subj in names:
            k = index[subj]
            print(f"{subj:48} | {correct[k].item() / max(total[k].item(), 1):.3f} | {correct[k].item()}/{total[k].item()}")
        print(f"{'average':48} | {accuracy:.3f}")
    return accuracy
