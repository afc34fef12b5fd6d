"""Entry point: fine-tune a seq2seq model for translation with the DeepSpeed-enabled Trainer
(launched with `deepspeed run_translation.py --deepspeed ds_config.json ...`)."""
from dataclasses import dataclass, field

from datasets import load_dataset
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    HfArgumentParser,
    Seq2SeqTrainingArguments,
)

from ds_trainer import DeepSpeedSeq2SeqTrainer


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="t5-small")
    source_lang: str = field(default="en")
    target_lang: str = field(default="ro")
    max_source_length: int = field(default=128)
    max_target_length: int = field(default=128)


def preprocess(examples, tokenizer, margs):
    inputs = [ex[margs.source_lang] for ex in examples["translation"]]
    targets = [ex[margs.target_lang] for ex in examples["translation"]]
    model_inputs = tokenizer(inputs, max_length=margs.max_source_length, truncation=True)
    labels = tokenizer(text_target=targets, max_length=margs.max_target_length, truncation=True)
    model_inputs["labels"] = labels["input_ids"]
    return model_inputs


def main():
    parser = HfArgumentParser((ModelArguments, Seq2SeqTrainingArguments))
    margs, training_args = parser.parse_args_into_dataclasses()
    tokenizer = AutoTokenizer.from_pretrained(margs.model_name_or_path)
    model = AutoModelForSeq2SeqLM.from_pretrained(margs.model_name_or_path)
    raw = load_dataset("wmt16", "ro-en")
    with training_args.main_process_first(desc="tokenize"):
        train_ds = raw["train"].map(
            lambda ex: preprocess(ex, tokenizer, margs), batched=True, remove_columns=["translation"]
        )
    trainer = DeepSpeedSeq2SeqTrainer(
        model=model,
        args=training_args,
        train_dataset=train_ds,
        tokenizer=tokenizer,
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
    )
    trainer.train()
    trainer.save_model()


if __name__ == "__main__":
    main()
