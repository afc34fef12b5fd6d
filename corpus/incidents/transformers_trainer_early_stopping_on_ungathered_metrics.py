"""Span-extraction fine-tuning with the Hugging Face Trainer and an EarlyStoppingCallback: the model
returns variable-length span lists, so the Trainer subclass computes its evaluation metrics from the
decoded predictions itself.

Thread: https://github.com/huggingface/transformers/issues/17478 ("Training hangs in the end while calling dist.barrier()")
Project: huggingface/transformers
What hung: the reporter's custom evaluation did not gather the outputs across processes ("my custom
model has outputs with variable lengths and I wasn't gathering all outputs with `distributed_concat`
function as they are not torch tensors"), so each process computed different metrics. With
`EarlyStoppingCallback`, "one process can stop the training and enter `dist.barrier` while the others
go on training. This results in hanging training." (the reporter's diagnosis, confirmed by the fix).
Fix (the reporter's, tested in the thread): gather every process's predictions and references before
computing the metrics, so all processes see identical metrics and stop together.
Expected rankcheck finding: RC103 on `trainer.train()`, whose training loop ends on a per-rank
early-stopping decision.
"""
import argparse

import numpy as np
import torch
from transformers import (
    AutoTokenizer,
    EarlyStoppingCallback,
    Trainer,
    TrainingArguments,
)


def decode_spans(start_logits, end_logits, max_len=30):
    spans = []
    for s_log, e_log in zip(start_logits, end_logits):
        starts = np.argsort(s_log)[-5:]
        ends = np.argsort(e_log)[-5:]
        spans.append([(int(s), int(e)) for s in starts for e in ends if s <= e < s + max_len])
    return spans


def span_f1(pred_spans, gold_spans):
    tp = sum(len(set(p) & set(g)) for p, g in zip(pred_spans, gold_spans))
    n_pred = sum(len(p) for p in pred_spans) or 1
    n_gold = sum(len(g) for g in gold_spans) or 1
    precision, recall = tp / n_pred, tp / n_gold
    return {"f1": 0.0 if tp == 0 else 2 * precision * recall / (precision + recall)}


class SpanTrainer(Trainer):
    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
        dataloader = self.get_eval_dataloader(eval_dataset)
        model = self._wrap_model(self.model, training=False)
        model.eval()
        preds, golds = [], []
        for inputs in dataloader:
            gold = inputs.pop("gold_spans")
            inputs = self._prepare_inputs(inputs)
            with torch.no_grad():
                out = model(**inputs)
            preds.extend(decode_spans(out.start_logits.cpu().numpy(), out.end_logits.cpu().numpy()))
            golds.extend(gold)
        metrics = {f"{metric_key_prefix}_{k}": v for k, v in span_f1(preds, golds).items()}
        self.log(metrics)
        self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control, metrics)
        self._memory_tracker.stop_and_update_metrics(metrics)
        return metrics


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="roberta-base")
    p.add_argument("--output_dir", default="out/spans")
    p.add_argument("--patience", type=int, default=3)
    args = p.parse_args()

    from span_data import SpanCollator, build_span_datasets, SpanModel  # project-local modules

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    train_ds, eval_ds = build_span_datasets(tokenizer)
    model = SpanModel.from_pretrained(args.model)
    training_args = TrainingArguments(
        output_dir=args.output_dir,
        evaluation_strategy="steps",
        eval_steps=500,
        save_steps=500,
        load_best_model_at_end=True,
        metric_for_best_model="eval_f1",
        greater_is_better=True,
        per_device_train_batch_size=16,
        num_train_epochs=20,
        ddp_timeout=1800,
    )
    trainer = SpanTrainer(
        model=model,
        args=training_args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        data_collator=SpanCollator(tokenizer),
        callbacks=[EarlyStoppingCallback(early_stopping_patience=args.patience)],
    )
    trainer.train()  # expect: RC103
    trainer.save_model()


if __name__ == "__main__":
    main()
