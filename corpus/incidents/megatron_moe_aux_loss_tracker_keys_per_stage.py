"""MoE auxiliary-loss logging in Megatron-Core: before each training log, every tracked loss is
all-reduced across the pipeline-parallel group, looping over the names this rank has tracked.

Thread: https://github.com/NVIDIA/Megatron-LM/issues/1444 ("reduce_aux_losses_tracker_accross_ranks hangs if first pipeline stage has no moe layers")
Project: NVIDIA/Megatron-LM
What hung: "`reduce_aux_losses_tracker_across_ranks` do all_reduce across `_PIPELINE_MODEL_PARALLEL_GROUP`.
If some pipeline stage has no moe layers, all_reduce will hangs" -- e.g. with
`--moe-layer-freq "([0]*3+[1]*13)"` the first stage tracks nothing, so its loop runs zero times while
the other stages wait for it in the all-reduce. Maintainer: "This is a known issue. We are
currently fixing it."
Fix ("First pp stage should have zero padding values"): initialize every tracked name with zeros
on every stage before the reduction, so all stages loop over the same names.
Expected rankcheck finding: RC103 on the loop over the tracker's names, which differ per pipeline
stage, around the pipeline-group all_reduce.
"""
import torch
from megatron.core import parallel_state

_MOE_LAYER_WISE_LOGGING_TRACKER = {}


def get_moe_layer_wise_logging_tracker():
    return _MOE_LAYER_WISE_LOGGING_TRACKER


def save_to_aux_losses_tracker(name: str, loss: torch.Tensor, layer_number: int, num_layers: int, reduce_group=None, avg_group=None):
    if layer_number is None:
        return
    tracker = get_moe_layer_wise_logging_tracker()
    if name not in tracker:
        tracker[name] = {"values": torch.zeros(num_layers, device=loss.device)}
    tracker[name]["values"][layer_number - 1] += loss.detach()
    tracker[name]["reduce_group"] = reduce_group
    tracker[name]["avg_group"] = avg_group


def reduce_aux_losses_tracker_across_ranks():
    tracker = get_moe_layer_wise_logging_tracker()
    for name in tracker:  # expect: RC103
        values = tracker[name]["values"]
        torch.distributed.all_reduce(values, group=parallel_state.get_pipeline_model_parallel_group())
        if tracker[name].get("reduce_group") is not None:
            torch.distributed.all_reduce(values, group=tracker[name]["reduce_group"])
        if tracker[name].get("avg_group") is not None:
            torch.distributed.all_reduce(values, group=tracker[name]["avg_group"], op=torch.distributed.ReduceOp.AVG)


def track_moe_metrics(loss_scale: float, iteration: int, writer, total_loss_dict=None):
    reduce_aux_losses_tracker_across_ranks()
    tracker = get_moe_layer_wise_logging_tracker()
    for name, entry in tracker.items():
        loss = entry["values"].float() * loss_scale
        if total_loss_dict is not None:
            total_loss_dict[name] = loss.mean()
        if writer is not None:
            writer.add_scalar(name, loss.mean(), iteration)
        entry["values"].zero_()
