"""Step 2 of alpaca-rlhf's DeepSpeed-Chat pipeline: fine-tune a pairwise reward model (launched with
the `deepspeed` launcher, one process per GPU, DeepSpeed engine with ZeRO), evaluating the reward
accuracy on the held-out pairs every `--eval_interval` steps and logging to W&B.

Thread: https://github.com/l294265421/alpaca-rlhf/issues/5 ("stop at step2 evaluation_reward",
open; fixed by the maintainer in commit 8081d17 "fix: the training stops when the evaluation happens
in the training loop")
Project: l294265421/alpaca-rlhf (alpaca_rlhf/deepspeed_chat/training/step2_reward_model_finetuning/
main.py)
What hung: "I consistently pause (but do not exit) at the (evaluation_reward) during the training of
step 2 ... Perhaps the condition args.global_rank == 0 is unnecessary?" The maintainer: "You are
right. The condition args.global_rank == 0 has to be removed, since the evaluation_reward method
needs all processes to participate." The in-loop evaluation sits under `if args.global_rank == 0
and (step + 1) % 100 == 0:`, so only rank 0 runs `evaluation_reward`, whose engine forward (ZeRO
parameter gathering) and `get_all_reduce_mean` all-reduces have no partner; the other ranks go on
to the next step's `rm_model.backward` (gradient reduction) and the job stalls.
Fix (the reporter's code, confirmed by the maintainer; 8081d17 makes the same change): the in-loop
evaluation runs on every rank (`if (step + 1) % 100 == 0:`) and only the W&B logging stays on
global rank 0.
Expected rankcheck finding: RC101 on the `evaluation_reward(rm_model, eval_dataloader)` call under
`if args.global_rank == 0 and ...` (the collectives are inside the nested helper, in
`get_all_reduce_mean` from utils/utils.py and in the DeepSpeed engine forward).
Inferred: the dataset reader, the reward model and the argument list are trimmed to what the loop
needs; the 100-step interval is an argument here; the W&B project and entity are placeholders.
"""
import argparse
import math

import deepspeed
import numpy as np
import torch
import wandb
from deepspeed.ops.adam import FusedAdam
from torch.utils.data import DataLoader, SequentialSampler
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoTokenizer, get_scheduler

from alpaca_rlhf_lite.deepspeed_chat.training.utils.data.data_utils import DataCollatorReward, create_prompt_dataset
from alpaca_rlhf_lite.deepspeed_chat.training.utils.model.reward_model import create_critic_model
from alpaca_rlhf_lite.deepspeed_chat.training.utils.utils import (
    get_all_reduce_mean,
    get_optimizer_grouped_parameters,
    print_rank_0,
    set_random_seed,
    to_device,
)


def parse_args():
    parser = argparse.ArgumentParser(description="Finetune a reward model (DeepSpeed-Chat step 2)")
    parser.add_argument("--data_path", required=True)
    parser.add_argument("--model_name_or_path", required=True)
    parser.add_argument("--per_device_train_batch_size", type=int, default=4)
    parser.add_argument("--per_device_eval_batch_size", type=int, default=4)
    parser.add_argument("--max_seq_len", type=int, default=512)
    parser.add_argument("--learning_rate", type=float, default=5e-6)
    parser.add_argument("--weight_decay", type=float, default=0.1)
    parser.add_argument("--num_train_epochs", type=int, default=1)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--num_warmup_steps", type=int, default=0)
    parser.add_argument("--eval_interval", type=int, default=100)
    parser.add_argument("--zero_stage", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--local_rank", type=int, default=-1)
    return parser.parse_args()


def get_train_ds_config(stage, micro_batch, global_batch):
    return {
        "train_micro_batch_size_per_gpu": micro_batch,
        "train_batch_size": global_batch,
        "zero_optimization": {"stage": stage, "stage3_param_persistence_threshold": 1e4},
        "fp16": {"enabled": True, "loss_scale_window": 100},
        "gradient_clipping": 1.0,
    }


def main():
    args = parse_args()
    wandb.init(config=vars(args), project="rlhf", name="rlhf-step2", reinit=True)

    torch.cuda.set_device(args.local_rank)
    device = torch.device("cuda", args.local_rank)
    deepspeed.init_distributed()
    args.global_rank = torch.distributed.get_rank()

    ds_config = get_train_ds_config(
        args.zero_stage, args.per_device_train_batch_size,
        args.per_device_train_batch_size * torch.distributed.get_world_size() * args.gradient_accumulation_steps)
    set_random_seed(args.seed)
    torch.distributed.barrier()

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path, use_fast=False)
    tokenizer.pad_token = tokenizer.eos_token
    train_dataset, eval_dataset = create_prompt_dataset(args.data_path, 0.1, args.seed, tokenizer, args.max_seq_len)
    collator = DataCollatorReward()
    train_dataloader = DataLoader(train_dataset, collate_fn=collator, sampler=DistributedSampler(train_dataset),
                                  batch_size=args.per_device_train_batch_size)
    eval_dataloader = DataLoader(eval_dataset, collate_fn=collator, sampler=SequentialSampler(eval_dataset),
                                 batch_size=args.per_device_eval_batch_size)

    rm_model = create_critic_model(args.model_name_or_path, tokenizer)

    def evaluation_reward(model, eval_dataloader):
        model.eval()
        correct_predictions = 0
        scores = None
        rejected_scores = None
        for batch in eval_dataloader:
            batch = to_device(batch, device)
            with torch.no_grad():
                outputs = model(**batch)
            chosen = outputs["chosen_mean_scores"]
            rejected = outputs["rejected_mean_scores"]
            correct_predictions += (chosen > rejected).sum()
            scores = chosen if scores is None else torch.cat([scores, chosen])
            rejected_scores = rejected if rejected_scores is None else torch.cat([rejected_scores, rejected])
        total_predictions = scores.shape[0]
        scores_ave = scores.sum().float() / total_predictions
        rejected_scores_ave = rejected_scores.sum().float() / total_predictions
        acc = correct_predictions / total_predictions
        score_std = torch.tensor(np.std(scores.float().cpu().numpy()), device=device)
        try:
            acc = get_all_reduce_mean(acc).item()
            scores_ave = get_all_reduce_mean(scores_ave).item()
            score_std = get_all_reduce_mean(score_std).item()
            rejected_scores_ave = get_all_reduce_mean(rejected_scores_ave).item()
        except:  # noqa: E722 -- as in the project
            pass
        return scores_ave, rejected_scores_ave, acc, score_std

    optimizer = FusedAdam(get_optimizer_grouped_parameters(rm_model, args.weight_decay),
                          lr=args.learning_rate, betas=(0.9, 0.95))
    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    lr_scheduler = get_scheduler("cosine", optimizer=optimizer, num_warmup_steps=args.num_warmup_steps,
                                 num_training_steps=args.num_train_epochs * num_update_steps_per_epoch)
    rm_model, optimizer, _, lr_scheduler = deepspeed.initialize(
        model=rm_model, optimizer=optimizer, args=args, config=ds_config,
        lr_scheduler=lr_scheduler, dist_init_required=True)

    print_rank_0("***** Evaluating reward, Epoch 0 *****", args.global_rank)
    reward_score, rejected_scores, acc, score_std = evaluation_reward(rm_model, eval_dataloader)
    print_rank_0(f"chosen {reward_score} rejected {rejected_scores} acc {acc} std {score_std}", args.global_rank)

    for epoch in range(args.num_train_epochs):
        rm_model.train()
        mean_loss = 0
        for step, batch in enumerate(train_dataloader):
            batch = to_device(batch, device)
            outputs = rm_model(**batch, use_cache=False)
            loss = outputs["loss"]
            rm_model.backward(loss)
            rm_model.step()
            mean_loss += loss.item()
            reward = outputs["chosen_mean_scores"].mean().float()
            r_reward = outputs["rejected_mean_scores"].mean().float()
            print_rank_0(f"step: {step} loss: {loss} reward: {reward} r_reward: {r_reward}", args.global_rank)

            if args.global_rank == 0:
                wandb.log({"Train/epoch": epoch, "Train/step": step, "Train/loss": loss.item(),
                           "Train/reward_diff": (reward - r_reward).item()})

            if args.global_rank == 0 and (step + 1) % args.eval_interval == 0:
                reward_score, rejected_scores, acc, score_std = evaluation_reward(rm_model, eval_dataloader)  # expect: RC101
                wandb.log({"Eval/reward_score": reward_score, "Eval/score_std": score_std,
                           "Eval/rejected_scores": rejected_scores, "Eval/acc": acc})

        print_rank_0(f"Epoch {epoch + 1}/{args.num_train_epochs} with loss {mean_loss / (step + 1)}",
                     args.global_rank)
        reward_score, rejected_scores, acc, score_std = evaluation_reward(rm_model, eval_dataloader)
        if args.global_rank == 0:
            wandb.log({"Eval/epoch": epoch, "Eval/reward_score": reward_score, "Eval/acc": acc})

    rm_model.save_checkpoint("checkpoints/step2", tag="final")


if __name__ == "__main__":
    main()
