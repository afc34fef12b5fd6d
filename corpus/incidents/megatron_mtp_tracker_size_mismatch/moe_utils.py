"""MoE auxiliary-loss tracker of a Megatron-Core model with multi-token prediction (MTP) layers.

Thread: https://github.com/NVIDIA/Megatron-LM/pull/3401 ("Fix MoE aux loss tracker hang with MTP enabled")
Project: NVIDIA/Megatron-LM
What hung: "The MoE aux loss tracker `values` tensor has mismatched sizes across PP ranks, causing the
NCCL `all_reduce` to hang: During the forward pass, the router creates the tracker `values` tensor
with size `num_layers + mtp_num_layers` (e.g. 14 + 1 = 15). During logging, `track_moe_metrics()`
with `force_initialize=True` creates the tensor with size `num_layers` only ... PP ranks that have
no MoE layers ... get a size-14 tensor. PP ranks that have MoE layers already have size-15 tensors."
Fix (the PR): create the tensor with the same length everywhere, `num_layers + mtp_num_layers`.
Expected rankcheck finding: RC104 on the pipeline-group `all_reduce` whose tensor length depends on
which path (router on MoE stages, force-initialization elsewhere) created it on this rank.
"""
import torch
from megatron.core import parallel_state

_TRACKER = {}


def get_moe_layer_wise_logging_tracker():
    return _TRACKER


def save_to_aux_losses_tracker(name, loss, layer_number, num_layers, reduce_group=None, avg_group=None):
    tracker = get_moe_layer_wise_logging_tracker()
    if name not in tracker:
        tracker[name] = {"values": torch.zeros(num_layers, device=loss.device)}
    tracker[name]["values"][layer_number - 1] += loss.detach()
    tracker[name]["reduce_group"] = reduce_group
    tracker[name]["avg_group"] = avg_group


def reduce_aux_losses_tracker_across_ranks(track_names):
    tracker = get_moe_layer_wise_logging_tracker()
    for name in track_names:
        values = tracker[name]["values"]
        torch.distributed.all_reduce(values, group=parallel_state.get_pipeline_model_parallel_group())  # expect: RC104
        if tracker[name].get("reduce_group") is not None:
            torch.distributed.all_reduce(values, group=tracker[name]["reduce_group"])


def track_moe_metrics(loss_scale, iteration, writer, num_layers, track_names=("load_balancing_loss",), force_initialize=True):
    tracker = get_moe_layer_wise_logging_tracker()
    if force_initialize:
        for name in track_names:
            if name not in tracker:
                tracker[name] = {"values": torch.zeros(num_layers, device=torch.cuda.current_device())}
    reduce_aux_losses_tracker_across_ranks(track_names)
    for name in track_names:
        loss = tracker[name]["values"].float() * loss_scale
        if writer is not None:
            writer.add_scalar(f"{name}/mean", loss.mean(), iteration)
        tracker[name]["values"].zero_()
