"""Safe twin of megatron_dsa_indexer_loss_early_return.py: a stage that tracked nothing contributes
zeros, so every pipeline stage reaches the all-reduces.

Thread: https://github.com/NVIDIA/Megatron-LM/issues/4745 (fixed in NVIDIA/Megatron-LM#4518)
"""
import torch
from megatron.core import parallel_state


class DSAIndexerLossLoggingHelper:
    tracker = {}

    @staticmethod
    def save_loss_to_tracker(loss: torch.Tensor, layer_number: int, num_layers: int):
        tracker = DSAIndexerLossLoggingHelper.tracker
        if "values" not in tracker:
            tracker["values"] = torch.zeros(num_layers, device=loss.device)
        tracker["values"][layer_number - 1] += loss.detach()

    @staticmethod
    def reduce_loss_in_tracker(num_layers: int, device):
        tracker = DSAIndexerLossLoggingHelper.tracker
        if "values" not in tracker:
            tracker["values"] = torch.zeros(num_layers, device=device)
        values = tracker["values"]
        torch.distributed.all_reduce(values, group=parallel_state.get_pipeline_model_parallel_group())
        torch.distributed.all_reduce(values, group=parallel_state.get_data_parallel_group(), op=torch.distributed.ReduceOp.AVG)

    @staticmethod
    def track_indexer_metrics(loss_scale: float, iteration: int, writer, num_layers: int, device, total_loss_dict=None):
        DSAIndexerLossLoggingHelper.reduce_loss_in_tracker(num_layers, device)
        tracker = DSAIndexerLossLoggingHelper.tracker
        loss = tracker["values"] * loss_scale
        if total_loss_dict is not None:
            total_loss_dict["indexer loss"] = loss.mean()
        if writer is not None:
            writer.add_scalar("indexer loss", loss.mean(), iteration)
        tracker["values"].zero_()
