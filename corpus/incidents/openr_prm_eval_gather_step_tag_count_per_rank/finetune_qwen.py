"""Process-reward-model fine-tuning of Qwen2.5-Math with the HF Trainer (openr prm/code/finetune_qwen.py
style): each reasoning step ends in a step tag; the model is trained to put `+`/`-` there, and the
evaluation scores the probability of `+` at every step tag (AUC, accuracy).

Thread: https://github.com/openreasoner/openr/issues/83 ("Process hangs when using the given
metrics to evaluate in PRM multi-gpu training")
Project: openreasoner/openr
What hung: `preprocess_logits_for_metrics` keeps only the logits at step-tag positions, so its
outputs have as many rows as the batch has step tags. The reporter found that "this phenomenon
will only happen if the two gpus are preprocessing data samples with different nums of steps ...
the final logits differ after we take out the step tags": the Trainer pads across processes only
along dim 1 and then gathers, so the ranks enter `gather_for_metrics` with tensors of different
length and the evaluation loop hangs (single-GPU evaluation works).
Fix (the reporter's): pad before the gather ("the bug can be fixed by adding padding code ... and
doing some small tricks"); the twin keeps the batch shape instead -- it returns a per-token
probability map of shape [batch, seq_len] with -100 off the step tags, which the Trainer's
dim-1 padding makes equal on every rank, and filters the -100 in `compute_metrics`.
Expected rankcheck finding: RC104 on the `gather_function` of the preprocessed logits in
trainer_lite/evaluation.py (their first dimension is this rank's step-tag count).
"""
import argparse

import numpy as np
import torch
from datasets import load_dataset
from peft import LoraConfig, get_peft_model
from sklearn.metrics import roc_auc_score
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorWithPadding, TrainingArguments

from trainer_lite.evaluation import PRMTrainer

parser = argparse.ArgumentParser()
parser.add_argument("--model_path", type=str, default="Qwen/Qwen2.5-Math-7B-Instruct")
parser.add_argument("--data_path", type=str, default="datasets/math_aps.json")
parser.add_argument("--per_device_train_batch_size", type=int, default=4)
parser.add_argument("--per_device_eval_batch_size", type=int, default=4)
parser.add_argument("--total_batch_size", type=int, default=256)
parser.add_argument("--learning_rate", type=float, default=1e-4)
parser.add_argument("--server", type=str, default="1")
args = parser.parse_args()

good_token = "+"
bad_token = "-"
step_tag = "\n\n\n\n\n"

tokenizer = AutoTokenizer.from_pretrained(args.model_path, add_eos_token=False)
tokenizer.pad_token_id = 0
tokenizer.padding_side = "left"
candidate_tokens = tokenizer.encode(f" {good_token} {bad_token}")  # [488, 481]
step_tag_id = tokenizer.encode(f" {step_tag}")[-1]

model = AutoModelForCausalLM.from_pretrained(args.model_path, torch_dtype=torch.bfloat16)
lora_config = LoraConfig(task_type="CAUSAL_LM", r=8, lora_alpha=32, lora_dropout=0.1,
                         target_modules=["q_proj", "v_proj"])
model = get_peft_model(model, lora_config)


def preprocess_function(example):
    input = f"{example['question']} {example['process']}"
    tokenized_inputs = tokenizer(input, truncation=True, padding="max_length", max_length=2048)

    def find_all_indices(lst, element):
        return [i for i, x in enumerate(lst) if x == element]

    length = len(tokenized_inputs["input_ids"])
    indices = find_all_indices(tokenized_inputs["input_ids"], step_tag_id)
    if len(indices) != len(example["label"]):
        example["label"] = example["label"][: len(indices)]
    tokenized_inputs["labels"] = [-100] * length
    for i in range(len(indices)):
        if example["label"][i] == "+" or example["label"][i] == 1:
            tokenized_inputs["labels"][indices[i]] = candidate_tokens[0]
        elif example["label"][i] == "-" or example["label"][i] == 0:
            tokenized_inputs["labels"][indices[i]] = candidate_tokens[1]
        else:
            raise ValueError("label is wrong")
        tokenized_inputs["attention_mask"][indices[i]] = 0
    return tokenized_inputs


dataset = load_dataset("json", data_files=args.data_path)["train"].train_test_split(test_size=0.2, seed=42)
tokenized_datasets = dataset.map(preprocess_function)
tokenized_datasets["train"] = tokenized_datasets["train"].remove_columns(["question", "process", "label"])
tokenized_datasets["test"] = tokenized_datasets["test"].remove_columns(["question", "process", "label"])
data_collator = DataCollatorWithPadding(tokenizer)

world_size = int(torch.cuda.device_count())
gradient_accumulation_steps = args.total_batch_size // (args.per_device_train_batch_size * world_size)
fp = f"bs_{args.total_batch_size}_lr_{args.learning_rate}"
output_path = f"./prm_results_qwen_new.{args.server}/{fp}"


def preprocess_logits_for_metrics(logits, labels):
    labels_index = torch.argwhere(torch.bitwise_or(labels == candidate_tokens[0], labels == candidate_tokens[1]))
    gold = torch.where(labels[labels_index[:, 0], labels_index[:, 1]] == candidate_tokens[1], 0, 1)
    logits = logits[labels_index[:, 0], labels_index[:, 1]][:, [candidate_tokens[1], candidate_tokens[0]]]
    prob = torch.softmax(logits, dim=-1)
    return prob[:, 1], gold


def compute_metrics(eval_pred):
    pre, labels = eval_pred
    auc = roc_auc_score(pre[1], pre[0])
    ll = np.mean(np.abs(pre[1] - (pre[0] > 0.5)))
    acc = 1 - ll
    return {"auc": auc, "ll": ll, "acc": acc}


training_args = TrainingArguments(
    output_dir=output_path,
    evaluation_strategy="steps",
    eval_steps=50,
    learning_rate=args.learning_rate,
    per_device_train_batch_size=args.per_device_train_batch_size,
    per_device_eval_batch_size=args.per_device_eval_batch_size,
    gradient_accumulation_steps=gradient_accumulation_steps,
    num_train_epochs=3,
    weight_decay=0.01,
    logging_steps=10,
    save_strategy="epoch",
    bf16=True,
    report_to="none",
    dataloader_num_workers=4,
    deepspeed=None,
    ddp_find_unused_parameters=False,
)

trainer = PRMTrainer(
    model=model,
    args=training_args,
    train_dataset=tokenized_datasets["train"],
    eval_dataset=tokenized_datasets["test"],
    data_collator=data_collator,
    tokenizer=tokenizer,
    preprocess_logits_for_metrics=preprocess_logits_for_metrics,
    compute_metrics=compute_metrics,
)

trainer.train()
trainer.evaluate()
model.save_pretrained(f"./fine_tuned_math_shepherd_lora_8k.{args.server}/{fp}")
tokenizer.save_pretrained(f"./fine_tuned_math_shepherd_lora_8k.{args.server}/{fp}")
