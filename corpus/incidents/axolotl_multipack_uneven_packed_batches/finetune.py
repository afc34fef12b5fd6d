"""axolotl fine-tuning (scripts/finetune.py, August 2023) of a Llama-2 LoRA on an alpaca-style
dataset with `sample_packing: true`, launched with `accelerate launch scripts/finetune.py
examples/llama-2/lora.yml` on several GPUs (plain DDP). With sample packing the HF Trainer draws
its batches from axolotl's `MultipackDistributedDataloader`: each process packs the samples its
`DistributedSampler` gives it into rows of `sequence_len` tokens, and stops after an estimated
number of batches that is the same on every process.

Thread: https://github.com/axolotl-ai-cloud/axolotl/pull/461 ("workaround so training doesn't hang
when packed dataloader batches aren't even")
Project: axolotl-ai-cloud/axolotl (the loader lives in axolotl_lite/utils/dataloader.py)
What hung: the PR, by the maintainer (winglian): "Due to the way the dataloader gets distributed
random samples from the sampler, each process gets the same # of tokens, but due to randomness,
some processes end up with smaller total rows in the packed dataset. This causes the trainer to
hang when it gets to that step since there is no data for that GPU." The loader's `__iter__` yields
one batch per packed chunk of this process's samples and stops at `len_remaining` (the shared
estimate), so a process whose samples pack into fewer rows leaves the Trainer's epoch loop early
while the others wait for it in the next step's DDP gradient all-reduce (and, with an eval split, in
the evaluation loop's per-step gathers).
Fix (the PR, merged): after the packed batches run out, the loader yields no-op batches (a single
token with label -100) until `len_remaining` is used up, so every process yields the same number of
batches ("This workaround just asks it to train against a single token, but we don't label
anything, so there is no additional accumulated loss for this").
Expected rankcheck finding: RC103 on `trainer.train(...)`, the framework call whose training loop
runs once per batch of this process's packed loader.
(Trimmed: config validation and normalization, wandb, flash-attention and BetterTransformer
options, inference and merge modes; the config is read as a plain dict. The dataset preparation is
condensed from axolotl.utils.data.)
"""
import logging
import math
import os
import signal
import sys
from pathlib import Path

import fire
import numpy as np
import torch
import yaml
from datasets import load_dataset
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer

from axolotl_lite.utils.trainer import setup_trainer

LOG = logging.getLogger("axolotl.scripts")

PROMPT = (
    "Below is an instruction that describes a task. Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n{instruction}\n\n### Response:\n"
)


def load_tokenizer(cfg):
    tokenizer = AutoTokenizer.from_pretrained(cfg.get("tokenizer_config") or cfg["base_model"], use_fast=True)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_model(cfg, tokenizer):
    model = AutoModelForCausalLM.from_pretrained(cfg["base_model"], torch_dtype=torch.bfloat16)
    peft_config = None
    if cfg.get("adapter") == "lora":
        peft_config = LoraConfig(
            r=cfg.get("lora_r", 32),
            lora_alpha=cfg.get("lora_alpha", 16),
            lora_dropout=cfg.get("lora_dropout", 0.05),
            target_modules=cfg.get("lora_target_modules", ["q_proj", "k_proj", "v_proj", "o_proj"]),
            task_type="CAUSAL_LM",
        )
        model = get_peft_model(model, peft_config)
        model.print_trainable_parameters()
    return model, peft_config


def prepare_dataset(cfg, tokenizer):
    raw = load_dataset("json", data_files=cfg["datasets"][0]["path"], split="train")

    def tokenize(example):
        prompt = PROMPT.format(instruction=example["instruction"])
        prompt_ids = tokenizer(prompt)["input_ids"]
        response_ids = tokenizer(example["output"] + tokenizer.eos_token, add_special_tokens=False)["input_ids"]
        input_ids = prompt_ids + response_ids
        labels = [-100] * len(prompt_ids) + response_ids
        return {"input_ids": input_ids, "attention_mask": [1] * len(input_ids), "labels": labels}

    dataset = raw.map(tokenize, remove_columns=raw.column_names, num_proc=os.cpu_count())
    # we have to drop anything longer then sequence len otherwise flash attention with position ids fails
    dataset = dataset.filter(lambda ex: 0 < len(ex["input_ids"]) <= cfg["sequence_len"], num_proc=os.cpu_count())
    if cfg.get("sample_packing"):
        dataset = dataset.map(lambda ex: {"position_ids": list(range(len(ex["input_ids"])))}, num_proc=os.cpu_count())

    eval_dataset = None
    if cfg.get("val_set_size"):
        split = dataset.train_test_split(test_size=cfg["val_set_size"], shuffle=False, seed=42)
        dataset, eval_dataset = split["train"], split["test"]

    total_num_tokens = np.sum(dataset.data.column("input_ids").to_pandas().apply(len).values)
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    batch_size = cfg["micro_batch_size"] * cfg["gradient_accumulation_steps"]
    # match count to len est in dataloader
    total_num_steps = (
        math.floor(
            0.99 * total_num_tokens / cfg.get("sample_packing_eff_est", 1.0) / cfg["sequence_len"] // batch_size // world_size
        )
        - 1
    ) * cfg["num_epochs"]
    LOG.info(f"total_num_tokens: {total_num_tokens}, total_num_steps: {total_num_steps}")
    return dataset, eval_dataset, total_num_steps


def train(config: Path = Path("examples/llama-2/lora.yml"), **kwargs):
    with open(config, encoding="utf-8") as file:
        cfg = yaml.safe_load(file)
    cfg.update(kwargs)
    cfg["local_rank"] = int(os.environ.get("LOCAL_RANK", 0))

    tokenizer = load_tokenizer(cfg)
    train_dataset, eval_dataset, total_num_steps = prepare_dataset(cfg, tokenizer)
    model, peft_config = load_model(cfg, tokenizer)
    safe_serialization = cfg.get("save_safetensors") is True

    trainer = setup_trainer(cfg, train_dataset, eval_dataset, model, tokenizer, total_num_steps)
    model.config.use_cache = False

    # go ahead and presave, so we have the adapter config available to inspect
    if peft_config:
        LOG.info(f"Pre-saving adapter config to {cfg['output_dir']}")
        peft_config.save_pretrained(cfg["output_dir"])

    # In case we want to stop early with ctrl+c, this is a nice to have to save the pretrained model
    if cfg["local_rank"] == 0:

        def terminate_handler(_, __, model):
            model.save_pretrained(cfg["output_dir"], safe_serialization=safe_serialization)
            sys.exit(0)

        signal.signal(signal.SIGINT, lambda signum, frame: terminate_handler(signum, frame, model))

    LOG.info("Starting trainer...")
    resume_from_checkpoint = cfg.get("resume_from_checkpoint")
    if resume_from_checkpoint is None and cfg.get("auto_resume_from_checkpoints"):
        possible_checkpoints = [str(cp) for cp in Path(cfg["output_dir"]).glob("checkpoint-*")]
        if len(possible_checkpoints) > 0:
            resume_from_checkpoint = sorted(possible_checkpoints, key=lambda path: int(path.split("-")[-1]))[-1]
            LOG.info(f"Using Auto-resume functionality to start with checkpoint at {resume_from_checkpoint}")

    if not Path(cfg["output_dir"]).is_dir():
        os.makedirs(cfg["output_dir"], exist_ok=True)
    tokenizer.save_pretrained(cfg["output_dir"])
    trainer.train(resume_from_checkpoint=resume_from_checkpoint)  # expect: RC103

    LOG.info(f"Training Completed!!! Saving pre-trained model to {cfg['output_dir']}")
    # only save on rank 0, otherwise it corrupts output on multi-GPU when multiple processes attempt to write the same file
    if cfg["local_rank"] == 0:
        model.save_pretrained(cfg["output_dir"], safe_serialization=safe_serialization)


if __name__ == "__main__":
    fire.Fire(train)
