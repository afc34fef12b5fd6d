"""ORPO preference fine-tuning of GPT-2 on hh-rlhf pairs with `accelerate launch --multi_gpu run_orpo.py
--dataset_name trl-internal-testing/hh-rlhf-helpful-base-trl-style --model_name_or_path gpt2
--per_device_train_batch_size 4 --max_steps 1000 --logging_steps 10 --bf16 --logging_first_step`
(TRL's examples/scripts/orpo.py, with the trainer it runs copied into orpo_lite/).

Thread: https://github.com/huggingface/trl/issues/3068 ("[Bug] ORPO Trainer hangs with multi-gpu on step 0",
closed; fixed by huggingface/trl#3069 "Fix: Multi gpu hang for ORPO and CPO Trainer", merged)
Project: huggingface/trl (trl/trainer/orpo_trainer.py, get_batch_loss_metrics)
What hung: "The training would hang on step 0. I have tracked it down to these two lines" -- the
`accelerator.gather_for_metrics(policy_rejected_logits)` / `(policy_chosen_logits)` calls -- on tensors of shape
`torch.Size([4, 223, 50257])`. Their dim 1 is the padded length of this process's batch (the collator pads each
batch to its own longest pair, `concatenated_inputs` to the longer of chosen/rejected), so each process enters
the all_gather with a different shape and the processes wait on each other in it.
Fix (the reporter's proposal, merged as #3069): "Call `.detach().mean()` on them prior to gather": every process
gathers a scalar.
Safe twin: `ORPOTrainer.get_batch_loss_metrics` (orpo_lite/trainer.py) gathers `policy_*_logits.detach().mean()`,
a scalar on every process (#3069). Expected: no finding.
Inferred: the reporter says the tensors are "really large" and does not name the shape mismatch; the per-batch
padding is the collator's documented behaviour. The trainer is trimmed to decoder-only models (no PEFT,
encoder-decoder, aux loss, XLA or eval-loop overrides) and the script's argument plumbing is simplified.
"""
from dataclasses import dataclass, field

from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser

from orpo_lite import DPODataCollatorWithPadding, ORPOConfig, ORPOTrainer
from orpo_lite.collator import tokenize_row


@dataclass
class ScriptArguments:
    dataset_name: str = field(default="trl-internal-testing/hh-rlhf-helpful-base-trl-style")
    dataset_train_split: str = field(default="train")
    dataset_test_split: str = field(default="test")


@dataclass
class ModelConfig:
    model_name_or_path: str = field(default="gpt2")


def main():
    parser = HfArgumentParser((ScriptArguments, ORPOConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_into_dataclasses()

    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    dataset = load_dataset(script_args.dataset_name)
    dataset = dataset.map(
        lambda row: {
            "prompt": tokenizer.apply_chat_template(row["prompt"], tokenize=False)
            if tokenizer.chat_template else row["prompt"][-1]["content"],
            "chosen": row["chosen"][-1]["content"],
            "rejected": row["rejected"][-1]["content"],
        }
    )
    dataset = dataset.map(
        tokenize_row,
        fn_kwargs={"tokenizer": tokenizer, "max_length": training_args.max_length,
                   "max_prompt_length": training_args.max_prompt_length},
        remove_columns=["prompt", "chosen", "rejected"],
    )

    trainer = ORPOTrainer(
        model,
        args=training_args,
        data_collator=DPODataCollatorWithPadding(pad_token_id=tokenizer.pad_token_id,
                                                 label_pad_token_id=training_args.label_pad_token_id),
        train_dataset=dataset[script_args.dataset_train_split],
        eval_dataset=dataset[script_args.dataset_test_split],
        processing_class=tokenizer,
    )
    trainer.train()
    trainer.save_model(training_args.output_dir)


if __name__ == "__main__":
    main()
