"""LM wrapper around the DeepSpeed engine being trained (ZeRO stage 3) that lm-eval's evaluator
drives: it scores loglikelihood requests in batches, like lm-eval's `HFLM._loglikelihood_tokens`.

Thread: https://github.com/EleutherAI/lm-evaluation-harness/issues/951 ("request pad not work as intended and potential solution"); fixed by https://github.com/EleutherAI/lm-evaluation-harness/pull/1520 ("Fix minor edge cases (#951 #1503)")
Project: EleutherAI/lm-evaluation-harness (lm_eval/evaluator.py `evaluate`, here
harness/evaluator.py), called in-process from the reporter's own HF/DeepSpeed training script.
What hung: "I integrated your fabulous evaluation framework into my HF based training scripts [...]
since I use Deepspeed zero-3 mostly, evaluation gets stuck at the end when I evaluate on tasks like
boolq and mmlu. The problem is caused by unequal number of batches across processes. [...] the
padding part didn't work as intended because the dict is accessed with wrong key": the padding is
recorded under `task.OUTPUT_TYPE` ("multiple_choice") but read back under `reqtype`
("loglikelihood"), so no rank is padded. Each rank then runs the loglikelihood batches of its own
stride of documents; under ZeRO-3 every forward all-gathers the partitioned parameters, and a rank
with fewer batches goes on to `wait_for_everyone` while the others are still in a forward.
Fix (#1520, merged; "Matters for Deepspeed Zero3 / FSDP"): `padding_requests[reqtype] += numpad`.
Expected rankcheck finding: RC103 on the batch loop of `loglikelihood`, whose trip count comes from
this rank's stride of the documents (harness/tasks.py); the padding meant to even it out is stored
under a key that is never read (harness/evaluator.py).
(Inferred: the reporter's integration code is not in the thread; here the LM wrapper calls the
DeepSpeed engine the script trains, and only BoolQ is evaluated.)
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
        for start in range(0, len(encoded), self.batch_size):  # expect: RC103
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
