"""Megatron's training.py form: every rank calls save_checkpoint at the interval."""
from megatron import mpu
from megatron.checkpointing import save_checkpoint
from megatron.utils import print_rank_0


def train(forward_step_func, model, optimizer, opt_param_scheduler, train_data_iterator, args):
    iteration = args.iteration
    while iteration < args.train_iters:
        loss_dict = forward_step_func(train_data_iterator, model)
        optimizer.step()
        opt_param_scheduler.step(increment=args.global_batch_size)
        iteration += 1
        if args.save and iteration % args.save_interval == 0:
            save_checkpoint(iteration, model, optimizer, opt_param_scheduler)
            if mpu.get_data_parallel_rank() == 0:
                print_rank_0(f"saved checkpoint at iteration {iteration}")
    return iteration
