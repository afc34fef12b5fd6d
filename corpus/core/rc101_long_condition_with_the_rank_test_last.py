"""An evaluation gated on configuration, the step and, at the very end, the rank: the evidence
quotes the condition cut around its rank test, the part that makes the ranks differ."""
import torch
import torch.distributed as dist


def maybe_evaluate(args, step, model, batch):
    if args.do_eval and not args.skip_validation and args.eval_every_n_steps > 0 and step % args.eval_every_n_steps == 0 and dist.get_rank() == 0:
        loss = model(batch).sum()
        dist.all_reduce(loss)  # expect: RC101
        return loss
    return torch.zeros(())
