"""Reconstruction of https://github.com/huggingface/trl/issues/1103

Project: huggingface/trl (PPOTrainer, accelerate underneath).
What hung: PPO sentiment tuning on several GPUs with log_with="wandb" stopped
right after the first ppo_trainer.step(). In PPOTrainer.log_stats the game-log
table was built inside `if self.accelerator.is_main_process:` and, when
distributed, the query/response columns were collected there with
accelerate.utils.gather_object. Only the main process entered that gather; it
sat in the all_gather_object while every other rank went on to the next
generate/step. vwxyzjn: "we are calling gather_object within the
if self.accelerator.is_main_process: block, so other processes never call the
gather_object and the main process hangs"; fixed by trl PR #1177.
Fix: gather the logged columns on every rank before the main-process block.
The incident code lived in trl's PPOTrainer.log_stats; here it is reproduced as
a log_stats helper of the training script (inferred layout, same logic).
expected: RC101 at line 62
"""
import argparse

import torch
from accelerate.utils import gather_object
from datasets import load_dataset
from tqdm import tqdm
from transformers import AutoTokenizer, pipeline
from trl import AutoModelForCausalLMWithValueHead, PPOConfig, PPOTrainer
from trl.core import LengthSampler


def build_dataset(tokenizer, dataset_name, min_len=2, max_len=8):
    ds = load_dataset(dataset_name, split="train")
    ds = ds.rename_columns({"text": "review"})
    ds = ds.filter(lambda x: len(x["review"]) > 200, batched=False)
    input_size = LengthSampler(min_len, max_len)

    def tokenize(sample):
        sample["input_ids"] = tokenizer.encode(sample["review"])[: input_size()]
        sample["query"] = tokenizer.decode(sample["input_ids"])
        return sample

    ds = ds.map(tokenize, batched=False)
    ds.set_format(type="torch")
    return ds


def collator(data):
    return {key: [d[key] for d in data] for key in data[0]}


def log_stats(ppo_trainer, stats, batch, rewards, columns_to_log=("query", "response")):
    accelerator = ppo_trainer.accelerator
    if not isinstance(rewards, torch.Tensor):
        rewards = torch.tensor(rewards).to(ppo_trainer.current_device)
    rewards = accelerator.gather(rewards).flatten()

    if accelerator.is_main_process:
        logs = {}
        if ppo_trainer.config.log_with == "wandb":
            import wandb

            batch_list = [batch[column] for column in columns_to_log]
            if ppo_trainer.is_distributed:
                batch_list = [gather_object(column) for column in batch_list]  # expect: RC101
            table_rows = [list(r) for r in zip(*batch_list, rewards.cpu().tolist())]
            logs.update({"game_log": wandb.Table(columns=[*columns_to_log, "reward"], rows=table_rows)})
        logs.update(stats)
        logs["env/reward_mean"] = rewards.mean().item()
        logs["env/reward_std"] = rewards.std().item()
        logs["env/reward_dist"] = rewards.cpu().numpy()
        accelerator.log(logs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default="lvwerra/gpt2-imdb")
    parser.add_argument("--reward_model", default="lvwerra/distilbert-imdb")
    parser.add_argument("--dataset", default="imdb")
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--mini_batch_size", type=int, default=128)
    parser.add_argument("--learning_rate", type=float, default=1.41e-5)
    args = parser.parse_args()

    config = PPOConfig(
        model_name=args.model_name,
        learning_rate=args.learning_rate,
        log_with="wandb",
        batch_size=args.batch_size,
        mini_batch_size=args.mini_batch_size,
    )
    tokenizer = AutoTokenizer.from_pretrained(config.model_name)
    tokenizer.pad_token = tokenizer.eos_token
    dataset = build_dataset(tokenizer, args.dataset)

    model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
    ref_model = AutoModelForCausalLMWithValueHead.from_pretrained(config.model_name)
    ppo_trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=dataset, data_collator=collator)

    device = ppo_trainer.accelerator.device
    sentiment_pipe = pipeline("sentiment-analysis", model=args.reward_model, device=device)
    sent_kwargs = {"return_all_scores": True, "function_to_apply": "none", "batch_size": 16}
    gen_kwargs = {"min_length": -1, "top_k": 0.0, "top_p": 1.0, "do_sample": True,
                  "pad_token_id": tokenizer.eos_token_id}
    output_length_sampler = LengthSampler(4, 16)

    for batch in tqdm(ppo_trainer.dataloader):
        query_tensors = batch["input_ids"]
        response_tensors = ppo_trainer.generate(
            query_tensors, return_prompt=False, length_sampler=output_length_sampler, **gen_kwargs
        )
        batch["response"] = tokenizer.batch_decode(response_tensors)
        texts = [q + r for q, r in zip(batch["query"], batch["response"])]
        pipe_outputs = sentiment_pipe(texts, **sent_kwargs)
        rewards = [torch.tensor(output[1]["score"]) for output in pipe_outputs]
        stats = ppo_trainer.step(query_tensors, response_tensors, rewards)
        log_stats(ppo_trainer, stats, batch, rewards)


if __name__ == "__main__":
    main()
