"""Token classification with Accelerate and a padding collator: each batch is padded to its own
longest sentence, so `input_ids` and `labels` are as wide as this rank's longest sample.
Gathering them across processes without `pad_across_processes` hangs or fails on the mismatched
sizes (accelerate#167, transformers#28791). The loader reaches the loop through
`accelerator.prepare` with the model and through `enumerate`, and once through the keywords of a
dict spread into the DataLoader. Look-alikes that pad first, pad to a fixed length, or gather a
field the collator does not pad are in safe_gather_of_fixed_width_batch_fields.py."""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoTokenizer, DataCollatorForLanguageModeling, DataCollatorForTokenClassification


def evaluate(accelerator, model, loader):
    model.eval()
    for step, batch in enumerate(loader):
        with torch.no_grad():
            model(**batch)
        labels = accelerator.gather(batch["labels"])  # expect: RC104
        tokens = accelerator.gather(batch.input_ids)  # expect: RC104
        print(step, labels.shape, tokens.shape)


def count_tokens(accelerator, dataset, tokenizer):
    params = {"batch_size": 8, "collate_fn": DataCollatorForLanguageModeling(tokenizer, mlm=False)}
    loader = accelerator.prepare(DataLoader(dataset, **params))
    seen = 0
    for batch in loader:
        seen += accelerator.gather(batch["input_ids"]).numel()  # expect: RC104
    return seen


def main(model, dataset):
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained("bert-base-cased")
    collator = DataCollatorForTokenClassification(tokenizer)
    loader = DataLoader(dataset, collate_fn=collator, batch_size=16)
    model, loader = accelerator.prepare(model, loader)
    evaluate(accelerator, model, loader)
    count_tokens(accelerator, dataset, tokenizer)
