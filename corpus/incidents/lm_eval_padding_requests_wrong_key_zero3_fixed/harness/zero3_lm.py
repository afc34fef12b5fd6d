"""Safe twin of lm_eval_padding_requests_wrong_key_zero3: the evaluator records the padding under
the request type it is read back with (`padding_requests[reqtype] += numpad`, the merged fix of
lm-evaluation-harness#1520), so every rank runs as many loglikelihood requests, hence batches, as
the rank with the most documents.

Thread: https://github.com/EleutherAI/lm-evaluation-harness/issues/951 (fix: https://github.com/EleutherAI/lm-evaluation-harness/pull/1520)
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F


class DeepSpeedLM:
    def __init__(self, engine, tokenizer, batch_size=8, max_length=2048):
        self.engine = engine
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.max_length = max_length
        self.rank = dist.get_rank()
        self.world_size = dist.get_world_size()
        self.device = engine.device

    def gather(self, tensor):
        out = [torch.zeros_like(tensor) for _ in range(self.world_size)]
        dist.all_gather(out, tensor)
        return torch.stack(out)

    def barrier(self):
        dist.barrier()

    @torch.no_grad()
    def loglikelihood(self, requests):
        encoded = []
        for req in requests:
            ctx, cont = req.arguments
            ctx_ids = self.tokenizer(ctx, add_special_tokens=False).input_ids
            cont_ids = self.tokenizer(cont, add_special_tokens=False).input_ids
            encoded.append(((ctx_ids + cont_ids)[-self.max_length:], len(cont_ids)))

        results = []
        for start in range(0, len(encoded), self.batch_size):
            chunk = encoded[start:start + self.batch_size]
            width = max(len(ids) for ids, _ in chunk)
            inps = torch.full((len(chunk), width), self.tokenizer.pad_token_id, dtype=torch.long)
            for i, (ids, _) in enumerate(chunk):
                inps[i, :len(ids)] = torch.tensor(ids)
            logits = self.engine(inps.to(self.device)).logits  # ZeRO-3: parameter all-gathers
            logprobs = F.log_softmax(logits.float(), dim=-1)
            for i, (ids, n_cont) in enumerate(chunk):
                tgt = torch.tensor(ids[-n_cont:], device=self.device)
                lp = logprobs[i, len(ids) - n_cont - 1:len(ids) - 1].gather(-1, tgt[:, None]).sum()
                results.append(lp.item())
        return results
