"""The look-alike of rc104_padded_prompts_gathered_unpadded_across_ranks: the tokenizer gives one
row per prompt, so a tensor of one length per row has as many entries as the rank's prompts (the
per-device batch size, alike everywhere); and prompts padded to one `max_length` are as wide on
every rank."""
import torch
from accelerate import Accelerator


class RewardScorer:
    def __init__(self, tokenizer):
        self.accelerator = Accelerator()
        self.tokenizer = tokenizer

    def score(self, inputs):
        prompts = [example["prompt"] for example in inputs]
        prompt_ids = self.tokenizer.apply_chat_template(conversation=prompts, tokenize=True)["input_ids"]
        lengths = torch.tensor([len(ids) for ids in prompt_ids])
        fixed = self.tokenizer(prompts, padding="max_length", max_length=512, truncation=True, return_tensors="pt")["input_ids"]
        return self.accelerator.gather(lengths), self.accelerator.gather(fixed)

    def train(self, loader):
        for inputs in self.accelerator.prepare(loader):
            self.score(inputs)
