"""setup() downloads the vocabulary on local rank 0 and puts the strategy barrier inside the branch:
local rank 0 waits in a barrier the other ranks skip."""
import os
import urllib.request

import lightning.pytorch as pl
import torch


class LitLanguageModel(pl.LightningModule):
    def __init__(self, vocab_url: str, cache_dir: str) -> None:
        super().__init__()
        self.vocab_url = vocab_url
        self.cache_dir = cache_dir
        self.embedding = None

    def setup(self, stage: str) -> None:
        vocab_path = os.path.join(self.cache_dir, "vocab.txt")
        if self.local_rank == 0:
            if not os.path.exists(vocab_path):
                urllib.request.urlretrieve(self.vocab_url, vocab_path)
            self.trainer.strategy.barrier("vocab downloaded")  # expect: RC101
        with open(vocab_path) as f:
            vocab = f.read().split()
        self.embedding = torch.nn.Embedding(len(vocab), 256)
