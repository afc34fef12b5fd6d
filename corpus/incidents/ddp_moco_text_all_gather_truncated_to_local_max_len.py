"""MoCo-style contrastive pre-training of a text encoder under plain DDP: to enlarge the negative
queue, every GPU all-gathers its batch of query token ids before encoding them with the momentum
encoder.

Thread: https://github.com/pytorch/pytorch/issues/56112 ("torch.distributed.all_gather cannot gather variable length tensors ?")
Project: pytorch/pytorch (reporter's MoCo text-encoder training code)
What hung: to save compute the reporter trimmed each batch to its longest sequence
(`max_len = max(valid_len).item(); query_idx = query_idx[:, :max_len]`) before
`torch.distributed.all_gather(...)`. `max_len` differs per GPU, so the tensors handed to the
all_gather have different shapes and the call blocked. Reporter's own finding: "I figured out why
cannot gather from multiple gpu, because each gpu have different length query_idx!"; without the
trimming it does not block.
Fix (the reporter's): do not trim per GPU -- keep the fixed padded length (the tokenizer's
max_length) when gathering.
Expected rankcheck finding: RC104 on the `all_gather` whose input was cut to a per-rank length.
"""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import AutoModel


@torch.no_grad()
def concat_all_gather(tensor):
    tensors_gather = [torch.ones_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(tensors_gather, tensor, async_op=False)  # expect: RC104
    return torch.cat(tensors_gather, dim=0)


class TextMoCo(torch.nn.Module):
    def __init__(self, name: str, dim: int = 128, K: int = 65536, m: float = 0.999, T: float = 0.07):
        super().__init__()
        self.K, self.m, self.T = K, m, T
        self.encoder_q = AutoModel.from_pretrained(name)
        self.encoder_k = AutoModel.from_pretrained(name)
        hidden = self.encoder_q.config.hidden_size
        self.proj_q = torch.nn.Linear(hidden, dim)
        self.proj_k = torch.nn.Linear(hidden, dim)
        for p_k in list(self.encoder_k.parameters()) + list(self.proj_k.parameters()):
            p_k.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update(self):
        for p_q, p_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            p_k.data = p_k.data * self.m + p_q.data * (1.0 - self.m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        keys = concat_all_gather(keys)
        ptr = int(self.queue_ptr)
        self.queue[:, ptr : ptr + keys.shape[0]] = keys.T
        self.queue_ptr[0] = (ptr + keys.shape[0]) % self.K

    def encode(self, encoder, proj, idx, mask, token_type):
        out = encoder(input_ids=idx, attention_mask=mask, token_type_ids=token_type).last_hidden_state[:, 0]
        return F.normalize(proj(out), dim=1)

    def forward(self, query_idx, attention_mask, token_type_ids, valid_len):
        # trim the padded batch to its longest sequence to save compute
        max_len = max(valid_len).item()
        query_idx = query_idx[:, :max_len]
        attention_mask = attention_mask[:, :max_len]
        token_type_ids = token_type_ids[:, :max_len]
        q = self.encode(self.encoder_q, self.proj_q, query_idx, attention_mask, token_type_ids)
        with torch.no_grad():
            self._momentum_update()
            all_idx = concat_all_gather(query_idx)
            all_mask = concat_all_gather(attention_mask)
            all_type = concat_all_gather(token_type_ids)
            k_all = self.encode(self.encoder_k, self.proj_k, all_idx, all_mask, all_type)
            rank, bsz = dist.get_rank(), query_idx.shape[0]
            k = k_all[rank * bsz : (rank + 1) * bsz]
        l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", q, self.queue.clone().detach())
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)
        self._dequeue_and_enqueue(k)
        return F.cross_entropy(logits, labels)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="bert-base-chinese")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--lr", type=float, default=3e-5)
    args = p.parse_args()
    dist.init_process_group("nccl", timeout=timedelta(minutes=30))
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    from moco_data import build_loader  # project-local: pads every sample to the tokenizer's max_length

    loader, sampler = build_loader(args.model)
    model = DDP(TextMoCo(args.model).cuda(), device_ids=[torch.cuda.current_device()])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for batch in loader:
            batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
            loss = model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"], batch["valid_len"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
