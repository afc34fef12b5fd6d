"""Safe twin of megatron_bridge_non_loss_eval_on_last_rank/eval.py: as in the merged fix, the
non-loss collection pass runs the pipeline schedule on every rank (each stage sends and receives
its part); the collected data stays on the last stage and `process_non_loss_data_func` is still
called only on the last rank, when a writer is present.

Thread: https://github.com/NVIDIA-NeMo/Megatron-Bridge/pull/6025
"""
import math
import time
from typing import Callable, Optional

import torch
from megatron.core.num_microbatches_calculator import get_num_microbatches
from megatron.core.pipeline_parallel import get_forward_backward_func
from megatron.core.pipeline_parallel.utils import is_pp_last_stage

from common_utils import is_last_rank, print_rank_0, print_rank_last


def evaluate(
    state,
    forward_step_func: Callable,
    data_iterator,
    model: list,
    process_non_loss_data_func: Optional[Callable],
    config,
    verbose: bool = False,
    non_loss_data_func: Optional[Callable] = None,
):
    """Run `eval_iters` forward-only steps; returns (averaged losses, collected non-loss data, timelimit_hit)."""
    for model_chunk in model:
        model_chunk.eval()

    pp_group = state.pg_collection.pp
    dp_cp_group = state.pg_collection.dp_cp
    total_loss_dict = {}

    eval_batch_size = config.train.global_batch_size
    eval_num_microbatches = eval_batch_size // (config.train.micro_batch_size * config.data_parallel_size)

    with torch.no_grad():
        if verbose:
            print_rank_0(f"Evaluating on {config.validation.eval_iters * eval_batch_size} samples")
        forward_backward_func = get_forward_backward_func()

        for iteration in range(config.validation.eval_iters):
            if verbose:
                print_rank_0(f"Evaluating iter {iteration + 1}/{config.validation.eval_iters}")
            loss_dicts = forward_backward_func(
                forward_step_func=forward_step_func,
                data_iterator=data_iterator,
                model=model,
                num_microbatches=eval_num_microbatches,
                seq_length=config.model.seq_length,
                micro_batch_size=config.train.micro_batch_size,
                forward_only=True,
            )
            if config.train.empty_unused_memory_level >= 1:
                torch.cuda.empty_cache()

            if is_pp_last_stage(pp_group):
                # Sum numerator and token count over the data-parallel ranks of the last stage.
                for key in loss_dicts[0].keys():
                    if key not in total_loss_dict:
                        total_loss_dict[key] = torch.zeros(2, dtype=torch.float, device="cuda")
                    val = torch.vstack([x[key].view(-1) for x in loss_dicts]).sum(dim=0)
                    torch.distributed.all_reduce(val, group=dp_cp_group)
                    total_loss_dict[key] += val

            state.train_state.consumed_valid_samples += eval_batch_size

        collected_non_loss_data = None
        if non_loss_data_func is not None:
            collected_non_loss_data = non_loss_data_func(model)
        elif process_non_loss_data_func is not None:
            # Every pipeline stage must enter the schedule; only the last one keeps the outputs.
            collected_non_loss_data = forward_backward_func(
                forward_step_func=forward_step_func,
                data_iterator=data_iterator,
                model=model,
                num_microbatches=get_num_microbatches(),
                seq_length=config.model.seq_length,
                micro_batch_size=config.train.micro_batch_size,
                forward_only=True,
                collect_non_loss_data=True,
            )

    for model_chunk in model:
        model_chunk.train()

    for key in total_loss_dict:
        numerator, denominator = total_loss_dict[key]
        total_loss_dict[key] = numerator / denominator

    return total_loss_dict, collected_non_loss_data, False


def evaluate_and_print_results(
    state,
    prefix: str,
    forward_step_func: Callable,
    data_iterator,
    model: list,
    config,
    verbose: bool = False,
    write_to_tensorboard: bool = True,
    process_non_loss_data_func: Optional[Callable] = None,
    non_loss_data_func: Optional[Callable] = None,
) -> None:
    writer = state.tensorboard_logger if write_to_tensorboard else None
    start = time.time()

    total_loss_dict, collected_non_loss_data, timelimit = evaluate(
        state,
        forward_step_func,
        data_iterator,
        model,
        process_non_loss_data_func,
        config,
        verbose,
        non_loss_data_func,
    )
    if timelimit:
        return

    step = state.train_state.step
    parts = [f"validation at {prefix}"]
    for key, value in total_loss_dict.items():
        loss = value.item()
        parts.append(f"{key} {loss:.4f} (ppl {math.exp(min(20.0, loss)):.2f})")
        if writer is not None:
            writer.add_scalar(f"validation/{key}", loss, step)
    parts.append(f"{time.time() - start:.1f}s")
    print_rank_last(" | ".join(parts))

    if process_non_loss_data_func is not None and writer is not None and is_last_rank():
        process_non_loss_data_func(collected_non_loss_data, step, writer)
