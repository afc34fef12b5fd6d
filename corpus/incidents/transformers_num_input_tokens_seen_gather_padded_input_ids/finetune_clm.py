"""Supervised fine-tuning of a causal LM on an instruction dataset, launched with
`torchrun --nproc_per_node 8 finetune_clm.py --include_num_input_tokens_seen ...`: examples are
tokenized without padding and each batch is padded by the collator to its own longest sequence, so
every process sees `input_ids` of a different length at each step. The Trainer counts the tokens
seen, for the logs, by gathering the inputs of every process.

Thread: https://github.com/huggingface/transformers/issues/28791 ("Inappropriate reduce operation of
\"num_input_tokens_seen\" is prone to get training stuck.")
Project: huggingface/transformers (Trainer 4.37; the loop lives in hf_trainer_lite/trainer.py)
What hung: the reporter: `self.state.num_input_tokens_seen +=
self.accelerator.gather(inputs[main_input_name]).numel()` -- "The length of
\"inputs[main_input_name]\" is not guaranteed to be the same when using ddp, which may make the
training process hang", pointing to accelerate#1326 for the same all-gather of unequal tensors;
with dynamic padding the all-gather of `input_ids` has a different second dimension on each
process.
Fix (transformers#29099, merged, by the reporter, approved by muellerzr and ArthurZucker): take
`.numel()` first and gather the one-element count, `torch.sum(self.accelerator.gather(
torch.tensor(inputs[main_input_name].numel(), device=input_device, dtype=torch.int64))).item()`.
Expected rankcheck finding: RC104 on the gather of `inputs[main_input_name]` in
hf_trainer_lite/trainer.py (a batch of this process's own padded length).
(Inferred: the model, the dataset and the collator; the issue names only the padded inputs.)
"""
import argparse

from datasets import load_dataset
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    TrainingArguments,
    set_seed,
)

from hf_trainer_lite import Trainer

PROMPT = "### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:\n"


def parse_args():
    parser = argparse.ArgumentParser(description="Instruction tuning with token counting")
    parser.add_argument("--model_name_or_path", type=str, default="EleutherAI/pythia-410m")
    parser.add_argument("--dataset_name", type=str, default="yahma/alpaca-cleaned")
    parser.add_argument("--max_seq_length", type=int, default=1024)
    parser.add_argument("--output_dir", type=str, default="out/sft")
    parser.add_argument("--per_device_train_batch_size", type=int, default=4)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=4)
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--num_train_epochs", type=float, default=3.0)
    parser.add_argument("--logging_steps", type=int, default=10)
    parser.add_argument("--include_num_input_tokens_seen", action="store_true")
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def main():
    cli = parse_args()
    set_seed(cli.seed)

    tokenizer = AutoTokenizer.from_pretrained(cli.model_name_or_path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    raw = load_dataset(cli.dataset_name, split="train")

    def tokenize(example):
        prompt = PROMPT.format(instruction=example["instruction"], input=example.get("input", ""))
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        answer_ids = tokenizer(example["output"] + tokenizer.eos_token, add_special_tokens=False)["input_ids"]
        input_ids = (prompt_ids + answer_ids)[: cli.max_seq_length]
        labels = ([-100] * len(prompt_ids) + answer_ids)[: cli.max_seq_length]
        return {"input_ids": input_ids, "attention_mask": [1] * len(input_ids), "labels": labels}

    train_dataset = raw.map(tokenize, remove_columns=raw.column_names, desc="Tokenizing")

    # Dynamic padding: each batch is padded to its own longest example.
    collator = DataCollatorForSeq2Seq(tokenizer, padding=True, label_pad_token_id=-100, pad_to_multiple_of=8)

    training_args = TrainingArguments(
        output_dir=cli.output_dir,
        per_device_train_batch_size=cli.per_device_train_batch_size,
        gradient_accumulation_steps=cli.gradient_accumulation_steps,
        learning_rate=cli.learning_rate,
        num_train_epochs=cli.num_train_epochs,
        lr_scheduler_type="cosine",
        warmup_ratio=0.03,
        weight_decay=0.0,
        logging_steps=cli.logging_steps,
        bf16=True,
        include_num_input_tokens_seen=cli.include_num_input_tokens_seen,
        report_to="none",
    )

    model = AutoModelForCausalLM.from_pretrained(cli.model_name_or_path)
    trainer = Trainer(
        model=model,
        args=training_args,
        data_collator=collator,
        train_dataset=train_dataset,
        tokenizer=tokenizer,
    )
    result = trainer.train()
    trainer.log(result.metrics)
    trainer.save_model()


if __name__ == "__main__":
    main()
