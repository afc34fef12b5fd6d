"""Preference-pair tokenization and the collator that pads each batch to its own longest sequence."""

from dataclasses import dataclass
from typing import Any

import torch
from torch.nn.utils.rnn import pad_sequence


def tokenize_row(feature, tokenizer, max_length=1024, max_prompt_length=512, label_pad_token_id=-100):
    """Tokenize prompt/chosen/rejected; labels mask the prompt tokens."""
    prompt_ids = tokenizer(feature["prompt"], add_special_tokens=False)["input_ids"][-max_prompt_length:]
    batch = {}
    for kind in ("chosen", "rejected"):
        answer_ids = tokenizer(feature[kind], add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        input_ids = (prompt_ids + answer_ids)[:max_length]
        labels = ([label_pad_token_id] * len(prompt_ids) + answer_ids)[:max_length]
        batch[f"{kind}_input_ids"] = input_ids
        batch[f"{kind}_attention_mask"] = [1] * len(input_ids)
        batch[f"{kind}_labels"] = labels
    return batch


@dataclass
class DPODataCollatorWithPadding:
    """Pads every `*_input_ids` / `*_attention_mask` / `*_labels` field to the longest sequence of the batch."""

    pad_token_id: int = 0
    label_pad_token_id: int = -100

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        padded_batch = {}
        for k in features[0].keys():
            if k.endswith(("_input_ids", "_attention_mask", "_labels")):
                to_pad = [torch.LongTensor(ex[k]) for ex in features]
                if k.endswith("_input_ids"):
                    padding_value = self.pad_token_id
                elif k.endswith("_labels"):
                    padding_value = self.label_pad_token_id
                else:
                    padding_value = 0
                padded_batch[k] = pad_sequence(to_pad, batch_first=True, padding_value=padding_value)
            else:
                padded_batch[k] = [ex[k] for ex in features]
        return padded_batch
