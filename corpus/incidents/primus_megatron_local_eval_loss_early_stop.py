"""MLPerf-style Llama pretraining loop on a Megatron-LM backend (AMD Primus): every `eval_interval`
iterations each data-parallel rank evaluates its own validation shard, and training stops as soon
as the validation loss reaches the MLPerf target. The loss compared with the target is the rank's
local value.

Thread: https://github.com/AMD-AGI/Primus/pull/854 ("Add MLperf examples for llama3.1 8b and gpt oss 20B")
Project: AMD-AGI/Primus
What hung: "Without this, args._eval_val_loss stays a per-rank local value, and the target-eval-loss
early stop (mlperf_pretrain_trainer.py) is then evaluated inconsistently: near the target one rank's
local loss can dip <= target and exit train() alone while the others keep training, desyncing
collectives (grad-norm all-reduce) -> NCCL hang at ~172k." (comment in the PR's evaluator fix)
Fix (the PR, merged): "Reduce numerator/denominator across data-parallel ranks so the validation
loss is a TRUE global average, identical on every rank" (an all_reduce SUM over the data-parallel
group before the division); the early stop itself is unchanged.
Expected rankcheck finding: RC102 on the early-stop `return` taken on the rank-local validation loss.
Inferred: the shape of the train loop and of `train_step` (the thread shows only the evaluator).
"""
import os

import torch
import torch.distributed as dist
from megatron.core import parallel_state
from megatron.training import get_args


def log_rank_0(msg):
    if dist.get_rank() == 0:
        print(msg, flush=True)


def global_grad_norm(params):
    local_sq = torch.zeros(1, dtype=torch.float32, device="cuda")
    for p in params:
        if p.grad is not None:
            local_sq += p.grad.detach().float().norm() ** 2
    dist.all_reduce(local_sq, op=dist.ReduceOp.SUM, group=parallel_state.get_model_parallel_group())
    return local_sq.sqrt().item()


def train_step(model, optimizer, batch, args):
    loss_sum, num_tokens = model(batch["tokens"], batch["position_ids"], batch["attention_mask"], labels=batch["labels"])
    (loss_sum / num_tokens).backward()
    model.finish_grad_sync()  # data-parallel gradient all-reduce
    grad_norm = global_grad_norm(model.parameters())
    if grad_norm > args.clip_grad:
        for p in model.parameters():
            if p.grad is not None:
                p.grad.mul_(args.clip_grad / (grad_norm + 1e-6))
    optimizer.step()
    optimizer.zero_grad()
    return (loss_sum / num_tokens).item(), grad_norm


def evaluate(model, valid_iter, args):
    model.eval()
    numerator, denominator = 0.0, 0
    with torch.no_grad():
        for _ in range(args.eval_iters):
            batch = next(valid_iter)
            loss_sum, num_tokens = model(batch["tokens"], batch["position_ids"], batch["attention_mask"], labels=batch["labels"])
            numerator += float(loss_sum)
            denominator += int(num_tokens)
    model.train()
    args._eval_val_loss = numerator / max(denominator, 1)
    return args._eval_val_loss


def train(model, optimizer, opt_param_scheduler, train_iter, valid_iter):
    args = get_args()
    target_eval_loss = float(os.environ.get("MLLOG_TARGET_EVAL_LOSS", "0"))
    iteration = args.iteration
    while iteration < args.train_iters:
        batch = next(train_iter)
        loss, grad_norm = train_step(model, optimizer, batch, args)
        opt_param_scheduler.step(increment=args.global_batch_size)
        iteration += 1
        if iteration % args.log_interval == 0:
            log_rank_0(f"iteration {iteration} | lm loss {loss:.4f} | grad norm {grad_norm:.3f}")
        if args.eval_interval and iteration % args.eval_interval == 0:
            val_loss = evaluate(model, valid_iter, args)
            log_rank_0(f"validation at iteration {iteration} | lm loss {val_loss:.4f}")
            if target_eval_loss > 0 and val_loss <= target_eval_loss:
                log_rank_0(f"target eval loss {target_eval_loss} reached, stopping")
                return iteration  # expect: RC102
    return iteration
