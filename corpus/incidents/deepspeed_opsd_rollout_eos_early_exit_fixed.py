"""Safe twin of deepspeed_opsd_rollout_eos_early_exit: rank-local EOS early exit is disabled
(`eos_token_id=None`), so every rank runs the same number of ZeRO-3 decode forwards; tokens after
EOS are masked afterwards.

Thread: https://github.com/deepspeedai/DeepSpeed/issues/8262 ("ZeRO-3 OPSD rollout deadlocks when data-parallel ranks finish generation at different lengths")
Project: deepspeedai/DeepSpeed
"""
import argparse

import deepspeed
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--local_rank", type=int, default=-1)
    p.add_argument("--max_response_length", type=int, default=1024)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--rollout_batch_size", type=int, default=4)
    p.add_argument("--num_steps", type=int, default=200)
    p = deepspeed.add_config_arguments(p)
    return p.parse_args()


def mask_after_eos(responses, eos_id):
    is_eos = responses == eos_id
    after = torch.cumsum(is_eos.int(), dim=1) - is_eos.int()
    return (after == 0).long()


class OPSDTrainer:
    def __init__(self, student_engine, teacher, tokenizer, args):
        self.student = student_engine
        self.teacher = teacher
        self.tokenizer = tokenizer
        self.args = args

    def rollout(self, prompts, prompt_mask):
        self.student.eval()
        with torch.no_grad():
            seqs = self.student.module.generate(
                input_ids=prompts,
                attention_mask=prompt_mask,
                max_new_tokens=self.args.max_response_length,
                do_sample=True,
                temperature=self.args.temperature,
                eos_token_id=None,  # fixed-length decode on every rank
                pad_token_id=self.tokenizer.pad_token_id,
            )
        responses = seqs[:, prompts.shape[1]:]
        return seqs, mask_after_eos(responses, self.tokenizer.eos_token_id)

    def step(self, prompts, prompt_mask):
        seqs, resp_mask = self.rollout(prompts, prompt_mask)
        attn = torch.cat([prompt_mask, resp_mask], dim=1)
        with torch.no_grad():
            teacher_logits = self.teacher(input_ids=seqs, attention_mask=attn).logits
        self.student.train()
        student_logits = self.student(input_ids=seqs, attention_mask=attn).logits
        start = prompts.shape[1] - 1
        s_logp = F.log_softmax(student_logits[:, start:-1], dim=-1)
        t_logp = F.log_softmax(teacher_logits[:, start:-1], dim=-1)
        kl = (s_logp.exp() * (s_logp - t_logp)).sum(-1)
        loss = (kl * resp_mask).sum() / resp_mask.sum().clamp(min=1)
        self.student.backward(loss)
        self.student.step()
        return loss.detach()


def main(student_model, teacher_model, tokenizer, prompt_dataset, collate):
    args = parse_args()
    deepspeed.init_distributed()
    student_engine, _, _, _ = deepspeed.initialize(
        args=args, model=student_model, model_parameters=student_model.parameters()
    )
    teacher = teacher_model.to(student_engine.device).eval()
    sampler = DistributedSampler(prompt_dataset, shuffle=True)
    loader = DataLoader(prompt_dataset, batch_size=args.rollout_batch_size, sampler=sampler,
                        collate_fn=collate)
    trainer = OPSDTrainer(student_engine, teacher, tokenizer, args)
    for step, batch in enumerate(loader):
        if step >= args.num_steps:
            break
        loss = trainer.step(batch["input_ids"].to(student_engine.device),
                            batch["attention_mask"].to(student_engine.device))
        if dist.get_rank() == 0 and step % 10 == 0:
            print(f"step {step} distill loss {loss.item():.4f}")
