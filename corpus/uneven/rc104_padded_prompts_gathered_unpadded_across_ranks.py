"""A reward loop gathers the tokenized prompts padded to this rank's longest (`padding=True`): as
many rows on every rank, but each rank's batch is as wide as its own longest prompt, so the
all-gather's shapes differ. (The look-alike gathers one length per prompt, and a batch padded
to a fixed `max_length`.)"""
import torch
from accelerate import Accelerator


class RewardScorer:
    def __init__(self, tokenizer):
        self.accelerator = Accelerator()
        self.tokenizer = tokenizer

    def score(self, inputs):
        prompts = [example["prompt"] for example in inputs]
        input_ids = self.tokenizer(prompts, padding=True, return_tensors="pt")["input_ids"]
        return self.accelerator.gather(input_ids)  # expect: RC104

    def train(self, loader):
        for inputs in self.accelerator.prepare(loader):
            self.score(inputs)
