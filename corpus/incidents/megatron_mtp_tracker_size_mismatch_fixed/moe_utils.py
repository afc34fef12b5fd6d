"""Safe twin of megatron_mtp_tracker_size_mismatch: the force-initialized tensors have the
router's length, `num_layers + mtp_num_layers`, so the pipeline-group all-reduce has the same shape
on every stage.

Thread: https://github.com/NVIDIA/Megatron-LM/pull/3401
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
        torch.distributed.all_reduce(values, group=parallel_state.get_pipeline_model_parallel_group())
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
