"""The Trainer hands `compute_loss` a batch its collator padded to the batch's own longest sample
(DataCollatorWithPadding for a tokenizer, trl's trainers' padding collators): the labels are as
wide as this process's longest sequence, and gathering them (trl#2879: SFTTrainer's token
accuracy gathered the shifted labels and logits) waits for shapes that do not match.

The look-alikes gather what each sequence reduces to (one count per row, as many rows as the
per-device batch size) and a scalar: as wide on every process."""
from transformers import Trainer


class TokenAccuracyTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        shift_labels = inputs["labels"][..., 1:].contiguous()
        everyone = self.accelerator.gather_for_metrics(shift_labels)  # expect: RC104
        counted = (inputs["labels"] != -100).sum(-1)
        per_row = self.accelerator.gather_for_metrics(counted)
        total = self.accelerator.gather_for_metrics((inputs["labels"] != -100).sum())
        self.log({"tokens": float(per_row.sum() + total.sum()), "seen": float(everyone.numel())})
        return (outputs.loss, outputs) if return_outputs else outputs.loss
