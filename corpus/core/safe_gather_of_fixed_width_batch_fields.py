"""Look-alikes of rc104_gather_dynamically_padded_batch_fields.py that gather alike-sized
tensors: the padded fields padded across processes first (the fix accelerate#167 was given),
a collator padding to a fixed length (`padding="max_length"`), and the one label per sample of a
sequence classifier, which DataCollatorWithPadding does not pad."""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoTokenizer, DataCollatorForTokenClassification, DataCollatorWithPadding


def evaluate_tokens(accelerator, model, loader, tokenizer):
    model.eval()
    for batch in loader:
        with torch.no_grad():
            model(**batch)
        labels = accelerator.pad_across_processes(batch["labels"], dim=1, pad_index=-100)
        labels = accelerator.gather(labels)
        print(labels.shape)


def evaluate_fixed(accelerator, loader):
    for step, batch in enumerate(loader):
        tokens = accelerator.gather(batch["input_ids"])
        print(step, tokens.shape)


def evaluate_sequences(accelerator, model, loader):
    for batch in loader:
        with torch.no_grad():
            model(**batch)
        references = accelerator.gather(batch["labels"])
        print(references.shape)


def main(model, token_data, sequence_data):
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained("bert-base-cased")
    dynamic = DataLoader(token_data, collate_fn=DataCollatorForTokenClassification(tokenizer), batch_size=16)
    fixed = DataLoader(token_data, collate_fn=DataCollatorForTokenClassification(tokenizer, padding="max_length", max_length=128), batch_size=16)
    sequences = DataLoader(sequence_data, collate_fn=DataCollatorWithPadding(tokenizer), batch_size=16)
    model, dynamic, fixed, sequences = accelerator.prepare(model, dynamic, fixed, sequences)
    evaluate_tokens(accelerator, model, dynamic, tokenizer)
    evaluate_fixed(accelerator, fixed)
    evaluate_sequences(accelerator, model, sequences)
