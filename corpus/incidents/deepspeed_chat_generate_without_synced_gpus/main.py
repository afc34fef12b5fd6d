"""Step-3 driver: for every prompt batch, generate experience with the actor and run the PPO
updates."""
import argparse

import deepspeed
import torch

from ppo_trainer import DeepSpeedPPOTrainer


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--actor_zero_stage", type=int, default=3)
    parser.add_argument("--max_answer_seq_len", type=int, default=256)
    parser.add_argument("--num_train_epochs", type=int, default=1)
    parser.add_argument("--local_rank", type=int, default=-1)
    return parser.parse_args()


def main(rlhf_engine, prompt_dataloader, ppo_update):
    args = parse_args()
    deepspeed.init_distributed()
    trainer = DeepSpeedPPOTrainer(rlhf_engine, args)
    for epoch in range(args.num_train_epochs):
        for step, batch_prompt in enumerate(prompt_dataloader):
            device = torch.device("cuda", args.local_rank)
            prompts = batch_prompt["prompt"].to(device)
            mask = batch_prompt["prompt_att_mask"].to(device)
            exp = trainer.generate_experience(prompts, mask)
            ppo_update(trainer, exp)
