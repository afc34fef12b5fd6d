"""Reconstruction of https://github.com/huggingface/transformers/pull/29980

Project: huggingface/transformers Trainer + PEFT prompt tuning + DeepSpeed ZeRO-3.
What hung: prompt-tuning a large causal LM with ZeRO-3; training hung right
after the first checkpoint save. Trainer.save_model (DeepSpeed branch) gathers
the state dict on all ranks but then calls `self._save(...)` only
`if self.args.should_save` (world process zero). For a prompt-learning
PeftModel, save_pretrained calls get_prompt_embedding_to_save, which runs the
prompt encoder forward; under ZeRO-3 that forward all-gathers the partitioned
parameters, so rank 0 waits in a gather the other ranks never join. PR author
(sywangyi): "the prompt-tuning has prompt_encoder forward in model
save_pretrained. only rank0 call the prompt_encoder forward in deepspeed zero3".
Fix proposed in the PR: run the PEFT save on every rank under ZeRO-3 and let
`is_main_process` decide who writes files (the exact patch is inferred).
The incident code is Trainer.save_model/_save; it is mirrored here in a Trainer
subclass used by the fine-tuning script.
expected: RC101 at line 50
"""
import os
from dataclasses import dataclass, field

import torch
from datasets import load_dataset
from peft import PromptTuningConfig, PromptTuningInit, TaskType, get_peft_model
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    HfArgumentParser,
    Trainer,
    TrainingArguments,
)
from transformers.trainer import TRAINING_ARGS_NAME


@dataclass
class ScriptArguments:
    model_name_or_path: str = field(default="meta-llama/Llama-2-70b-hf")
    dataset_name: str = field(default="ought/raft")
    num_virtual_tokens: int = field(default=8)
    max_length: int = field(default=256)


class PromptTuningTrainer(Trainer):
    def save_model(self, output_dir=None, _internal_call=False):
        output_dir = output_dir if output_dir is not None else self.args.output_dir
        if self.is_deepspeed_enabled:
            state_dict = self.accelerator.get_state_dict(self.deepspeed)
            if self.args.should_save:
                self._save_adapter(output_dir, state_dict=state_dict)  # expect: RC101
        elif self.args.should_save:
            self._save_adapter(output_dir)

    def _save_adapter(self, output_dir, state_dict=None):
        os.makedirs(output_dir, exist_ok=True)
        self.model.save_pretrained(output_dir, state_dict=state_dict,
                                   safe_serialization=self.args.save_safetensors)
        if self.tokenizer is not None:
            self.tokenizer.save_pretrained(output_dir)
        torch.save(self.args, os.path.join(output_dir, TRAINING_ARGS_NAME))


def main():
    parser = HfArgumentParser((ScriptArguments, TrainingArguments))
    script_args, training_args = parser.parse_args_into_dataclasses()

    tokenizer = AutoTokenizer.from_pretrained(script_args.model_name_or_path)
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(script_args.model_name_or_path, torch_dtype=torch.bfloat16)
    peft_config = PromptTuningConfig(
        task_type=TaskType.CAUSAL_LM,
        prompt_tuning_init=PromptTuningInit.TEXT,
        num_virtual_tokens=script_args.num_virtual_tokens,
        prompt_tuning_init_text="Classify if the tweet is a complaint or not:",
        tokenizer_name_or_path=script_args.model_name_or_path,
    )
    model = get_peft_model(model, peft_config)

    dataset = load_dataset(script_args.dataset_name, "twitter_complaints", split="train")

    def tokenize(example):
        text = f"Tweet text : {example['Tweet text']} Label : {example['Label']}"
        return tokenizer(text, truncation=True, max_length=script_args.max_length)

    dataset = dataset.map(tokenize, remove_columns=dataset.column_names)
    trainer = PromptTuningTrainer(
        model=model,
        args=training_args,
        train_dataset=dataset,
        tokenizer=tokenizer,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
    )
    trainer.train()
    trainer.save_model()


if __name__ == "__main__":
    main()
