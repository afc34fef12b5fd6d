"""Reward function of an RLHF project: a 6B reward model served by a DeepSpeed ZeRO-3 engine that is
partitioned across the same processes as the policy."""
import deepspeed
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer


class ParallelRewardModel:
    def __init__(self, path: str, ds_config: dict):
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
        self.engine, *_ = deepspeed.initialize(model=model, config=ds_config)
        self.engine.eval()

    @torch.no_grad()
    def __call__(self, samples, prompts=None, outputs=None, **kwargs):
        scores = []
        for start in range(0, len(samples), 8):
            enc = self.tokenizer(samples[start : start + 8], return_tensors="pt", padding=True, truncation=True).to(self.engine.device)
            scores.extend(self.engine(**enc).logits[:, 0].float().tolist())
        return scores
