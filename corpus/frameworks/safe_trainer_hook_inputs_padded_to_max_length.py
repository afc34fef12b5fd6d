"""The look-alike: the same Trainer subclass, but its data collator pads every batch to the
tokenizer's `max_length`, so the labels `compute_loss` gathers have one width on every rank."""
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments


class CountingTrainer(Seq2SeqTrainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = self.accelerator.gather_for_metrics(inputs["labels"])
        self.tokens_seen = getattr(self, "tokens_seen", 0) + int((labels != -100).sum())
        return super().compute_loss(model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)


def main(dataset, output_dir: str):
    tokenizer = AutoTokenizer.from_pretrained("t5-small")
    model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
    trainer = CountingTrainer(
        model=model,
        args=Seq2SeqTrainingArguments(output_dir=output_dir),
        train_dataset=dataset,
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model, padding="max_length", max_length=512),
    )
    trainer.train()
