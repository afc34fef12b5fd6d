"""An old-style Megatron training loop saves only on data-parallel rank 0, but Megatron's
save_checkpoint is collective: every rank writes its model-parallel shard, with barriers."""
from megatron import mpu
from megatron.checkpointing import save_checkpoint


def train(forward_step_func, model, optimizer, opt_param_scheduler, train_data_iterator, args):
    iteration = args.iteration
    while iteration < args.train_iters:
        loss_dict = forward_step_func(train_data_iterator, model)
        optimizer.step()
        opt_param_scheduler.step(increment=args.global_batch_size)
        iteration += 1
        if args.save and iteration % args.save_interval == 0 and mpu.get_data_parallel_rank() == 0:
            save_checkpoint(iteration, model, optimizer, opt_param_scheduler)  # expect: RC101
    return iteration
