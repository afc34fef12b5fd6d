"""Supervised fine-tuning of a chat model with TRL's SFTTrainer on several GPUs (`accelerate launch
--num_processes 8 trl_sft_token_accuracy_gather_logits.py --model_name_or_path Qwen/Qwen2.5-0.5B
--dataset_name trl-lib/Capybara --per_device_train_batch_size 4 --output_dir Qwen2.5-0.5B-SFT`), on TRL 0.15,
whose SFTTrainer.compute_loss added a token-accuracy metric (trl#2597); that compute_loss is copied into
`TokenAccuracySFTTrainer` below, here with #2890 applied.

Thread: https://github.com/huggingface/trl/pull/2890 ("Don't gather logits in SFT to avoid hanging", merged;
fixes huggingface/trl#2879)
Project: huggingface/trl (trl/trainer/sft_trainer.py, SFTTrainer.compute_loss)
What hung: maintainer (qgallouedec): "it seems that at some point in the training, always the same, it can hang
while trying to gather the logits"; a commenter: "I guess the reason is the sizes of gathered logits (seq length)
do not match. So gathering only the number o[f correct tokens] ..." Each process's batch is padded by the collator
to its own longest example, so `shift_logits` ([batch, len - 1, vocab]) and `shift_labels` have a per-process
dim 1 and the processes wait on each other in `accelerator.gather_for_metrics`.
Fix (#2890, merged): compute the number of correct tokens and of counted tokens locally and gather only those
two scalars; the accuracy is their ratio, logged on every process.
Safe twin: `TokenAccuracySFTTrainer.compute_loss` gathers only the scalar counts `correct_tokens` and
`total_tokens` (#2890). Expected: no finding.
Inferred: #2879's own script is not shown in what was read; model, dataset and arguments follow TRL's sft example
(packing off, so batches are padded per batch). `compute_token_accuracy` is the helper #2890 removed from
trl/trainer/utils.py.
"""
from dataclasses import dataclass, field
from typing import Optional

import torch
from datasets import load_dataset
from transformers import (AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, HfArgumentParser,
                          Trainer, TrainingArguments)


@dataclass
class ScriptArguments:
    model_name_or_path: str = field(default="Qwen/Qwen2.5-0.5B")
    dataset_name: str = field(default="trl-lib/Capybara")
    max_seq_length: int = field(default=1024)


class TokenAccuracySFTTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._metrics = {"mean_token_accuracy": []}

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        """Compute training loss and additionally compute token accuracies."""
        (loss, outputs) = super().compute_loss(
            model, inputs, return_outputs=True, num_items_in_batch=num_items_in_batch
        )

        if "labels" in inputs:
            shift_logits = outputs.logits[..., :-1, :].contiguous()
            shift_labels = inputs["labels"][..., 1:].contiguous()

            # Get predictions
            predictions = shift_logits.argmax(dim=-1)

            # Create mask for non-padding tokens (assuming ignore_index is -100)
            mask = shift_labels != -100

            # Calculate accuracy only on non-padding tokens
            correct_predictions = (predictions == shift_labels) & mask
            total_tokens = mask.sum()
            correct_tokens = correct_predictions.sum()

            # Gather the correct_tokens and total_tokens across all processes
            correct_tokens = self.accelerator.gather_for_metrics(correct_tokens)
            total_tokens = self.accelerator.gather_for_metrics(total_tokens)

            # Compute the mean token accuracy and log it
            accuracy = (correct_tokens.sum() / total_tokens.sum()).item() if total_tokens.sum() > 0 else 0.0
            self._metrics["mean_token_accuracy"].append(accuracy)

        return (loss, outputs) if return_outputs else loss

    def log(self, logs: dict[str, float], start_time: Optional[float] = None) -> None:
        metrics = {key: sum(val) / len(val) for key, val in self._metrics.items() if val}
        if next(iter(logs.keys())).startswith("eval_"):
            metrics = {f"eval_{key}": val for key, val in metrics.items()}
        logs = {**logs, **metrics}
        super().log(logs, start_time)
        self._metrics = {"mean_token_accuracy": []}


def main():
    parser = HfArgumentParser((ScriptArguments, TrainingArguments))
    script_args, training_args = parser.parse_args_into_dataclasses()

    tokenizer = AutoTokenizer.from_pretrained(script_args.model_name_or_path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(script_args.model_name_or_path, torch_dtype=torch.bfloat16)

    dataset = load_dataset(script_args.dataset_name)

    def tokenize(example):
        text = tokenizer.apply_chat_template(example["messages"], tokenize=False)
        return tokenizer(text, truncation=True, max_length=script_args.max_seq_length)

    dataset = dataset.map(tokenize, remove_columns=dataset["train"].column_names)
    collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)  # pads each batch to its longest example

    trainer = TokenAccuracySFTTrainer(
        model=model,
        args=training_args,
        data_collator=collator,
        train_dataset=dataset["train"],
        eval_dataset=dataset["test"],
        processing_class=tokenizer,
    )
    trainer.train()
    trainer.save_model(training_args.output_dir)


if __name__ == "__main__":
    main()
