"""Builds the pieces `train.py` needs: a small language model, its cross-entropy criterion, the
fairseq-style optimizer wrapper and a token-block dataset batched by number of tokens (collating
an empty batch to `{}`, as fairseq's collaters do)."""
import torch
import torch.nn.functional as F
from torch import nn


class TransformerLM(nn.Module):
    def __init__(self, vocab, dim=512, layers=6, heads=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, batch_first=True)
        self.layers = nn.TransformerEncoder(layer, layers)
        self.out = nn.Linear(dim, vocab)

    def forward(self, src_tokens):
        mask = nn.Transformer.generate_square_subsequent_mask(src_tokens.size(1)).to(src_tokens.device)
        return self.out(self.layers(self.embed(src_tokens), mask=mask))


class CrossEntropyCriterion(nn.Module):
    def forward(self, model, sample):
        logits = model(sample["net_input"]["src_tokens"])
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), sample["target"].view(-1), reduction="sum")
        ntokens = sample["ntokens"]
        return loss, ntokens, {"loss": loss.item(), "ntokens": ntokens,
                               "nsentences": sample["target"].size(0), "sample_size": ntokens}

    @staticmethod
    def aggregate_logging_outputs(logging_outputs):
        ntokens = sum(log.get("ntokens", 0) for log in logging_outputs)
        return {"loss": sum(log.get("loss", 0) for log in logging_outputs) / max(ntokens, 1),
                "ntokens": ntokens,
                "nsentences": sum(log.get("nsentences", 0) for log in logging_outputs),
                "sample_size": ntokens}


class FairseqAdam:
    def __init__(self, params, lr):
        self.params = [p for p in params if p.requires_grad]
        self._optimizer = torch.optim.Adam(self.params, lr=lr)

    def backward(self, loss):
        loss.backward()

    def multiply_grads(self, c):
        for p in self.params:
            if p.grad is not None:
                p.grad.data.mul_(c)

    def clip_grad_norm(self, max_norm):
        return torch.nn.utils.clip_grad_norm_(self.params, max_norm if max_norm > 0 else float("inf"))

    def step(self):
        self._optimizer.step()

    def zero_grad(self):
        self._optimizer.zero_grad()


class TokenBlockDataset(torch.utils.data.Dataset):
    def __init__(self, path, block_size):
        tokens = torch.load(path)
        n = (tokens.numel() - 1) // block_size
        self.src = tokens[: n * block_size].view(n, block_size)
        self.tgt = tokens[1: n * block_size + 1].view(n, block_size)

    def __len__(self):
        return self.src.size(0)

    def __getitem__(self, idx):
        return self.src[idx], self.tgt[idx]

    def collater(self, samples):
        if len(samples) == 0:
            return {}
        src = torch.stack([s[0] for s in samples])
        tgt = torch.stack([s[1] for s in samples])
        return {"net_input": {"src_tokens": src}, "target": tgt, "ntokens": tgt.numel()}


def batch_by_size(num_items, max_sentences):
    return [list(range(i, min(i + max_sentences, num_items))) for i in range(0, num_items, max_sentences)]


def build_language_model(args):
    dataset = TokenBlockDataset(args.data, args.tokens_per_sample)
    model = TransformerLM(args.vocab_size).cuda()
    criterion = CrossEntropyCriterion()
    optimizer = FairseqAdam(model.parameters(), lr=args.lr)
    return model, criterion, optimizer, dataset, dataset.collater, batch_by_size(len(dataset), args.max_sentences)
