"""Safe twin of megatron_moe_aux_loss_tracker_keys_per_stage.py: every stage first initializes each
expected loss name with zeros (stages without MoE layers contribute zeros), so all stages loop
over the same names and issue the same all-reduces.

Thread: https://github.com/NVIDIA/Megatron-LM/issues/1444
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


def reduce_aux_losses_tracker_across_ranks(track_names, num_layers: int, device):
    tracker = get_moe_layer_wise_logging_tracker()
    for name in track_names:
        if name not in tracker:
            tracker[name] = {"values": torch.zeros(num_layers, device=device)}
    for name in track_names:
        values = tracker[name]["values"]
        torch.distributed.all_reduce(values, group=parallel_state.get_pipeline_model_parallel_group())
        if tracker[name].get("reduce_group") is not None:
            torch.distributed.all_reduce(values, group=tracker[name]["reduce_group"])
        if tracker[name].get("avg_group") is not None:
            torch.distributed.all_reduce(values, group=tracker[name]["avg_group"], op=torch.distributed.ReduceOp.AVG)


def track_moe_metrics(loss_scale: float, iteration: int, writer, num_layers: int, device, total_loss_dict=None, track_names=("load_balancing_loss",)):
    reduce_aux_losses_tracker_across_ranks(track_names, num_layers, device)
    tracker = get_moe_layer_wise_logging_tracker()
    for name, entry in tracker.items():
        loss = entry["values"].float() * loss_scale
        if total_loss_dict is not None:
            total_loss_dict[name] = loss.mean()
        if writer is not None:
            writer.add_scalar(name, loss.mean(), iteration)
        entry["values"].zero_()
