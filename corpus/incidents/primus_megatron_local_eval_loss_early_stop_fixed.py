"""Safe twin of primus_megatron_local_eval_loss_early_stop.py: the evaluator all-reduces the loss
numerator and token count over the data-parallel group before dividing, so every rank compares the
same global validation loss with the target and all of them leave train() at the same iteration.

Thread: https://github.com/AMD-AGI/Primus/pull/854 ("Add MLperf examples for llama3.1 8b and gpt oss 20B")
Project: AMD-AGI/Primus
Expected rankcheck finding: none.
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
    reduced = torch.tensor([numerator, float(denominator)], dtype=torch.float64, device="cuda")
    dist.all_reduce(reduced, op=dist.ReduceOp.SUM, group=parallel_state.get_data_parallel_group())
    args._eval_val_loss = (reduced[0] / reduced[1]).item() if reduced[1].item() > 0 else float("inf")
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
                return iteration
    return iteration
