"""SFT of a text + audio causal LM with an ms-swift-style trainer (torchrun, DDP); sequence-level
accuracy is accumulated per rank in MeanMetric objects and reduced at every logging step."""
from collections import defaultdict
from dataclasses import dataclass, field

import torch
from datasets import load_dataset
from transformers import (AutoModelForCausalLM, AutoProcessor, HfArgumentParser, Seq2SeqTrainer,
                          Seq2SeqTrainingArguments)

from swift_metrics.acc import compute_acc
from swift_metrics.utils import MeanMetric


@dataclass
class ScriptArguments:
    model_id: str = "my-org/audio-lm-7b"
    dataset: str = "data/text_audio_sft.jsonl"
    acc_strategy: str = field(default="seq", metadata={"choices": ["token", "seq"]})


class SwiftSftTrainer(Seq2SeqTrainer):
    def __init__(self, *args, acc_strategy="seq", **kwargs):
        super().__init__(*args, **kwargs)
        self.acc_strategy = acc_strategy
        self.custom_metrics = {"train": defaultdict(lambda: MeanMetric(nan_value=None))}

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs["labels"]
        outputs = model(**inputs)
        if outputs.logits is not None:
            self._compute_acc(outputs, labels)
        return (outputs.loss, outputs) if return_outputs else outputs.loss

    def _compute_acc(self, outputs, labels) -> None:
        preds = outputs.logits.argmax(dim=-1)
        metrics = compute_acc(preds, labels, acc_strategy=self.acc_strategy)
        for k, v in metrics.items():
            self.custom_metrics["train"][k].update(v)

    def _maybe_log_save_evaluate(self, tr_loss, grad_norm, model, trial, epoch, ignore_keys_for_eval,
                                 start_time=None, **kwargs):
        if self.control.should_log:
            logs = {}
            for k, metric in self.custom_metrics["train"].items():
                value = metric.compute()["value"]
                if value is not None:
                    logs[k] = round(value, 8)
                metric.reset()
            if logs:
                self.log(logs)
        super()._maybe_log_save_evaluate(tr_loss, grad_norm, model, trial, epoch, ignore_keys_for_eval,
                                         start_time, **kwargs)


def main():
    script_args, training_args = HfArgumentParser((ScriptArguments, Seq2SeqTrainingArguments)).parse_args_into_dataclasses()
    processor = AutoProcessor.from_pretrained(script_args.model_id, trust_remote_code=True)
    model = AutoModelForCausalLM.from_pretrained(script_args.model_id, torch_dtype=torch.bfloat16,
                                                 trust_remote_code=True)
    train_dataset = load_dataset("json", data_files=script_args.dataset, split="train")

    def collate(features):
        return processor(text=[f["text"] for f in features], audio=[f.get("audio") for f in features],
                         return_tensors="pt", padding=True, return_labels=True)

    trainer = SwiftSftTrainer(model=model, args=training_args, train_dataset=train_dataset,
                              data_collator=collate, acc_strategy=script_args.acc_strategy)
    trainer.train()


if __name__ == "__main__":
    main()
