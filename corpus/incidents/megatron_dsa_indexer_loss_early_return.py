"""Logging of the DSA (sparse-attention indexer) loss in Megatron-Core: the tracked values are
summed across the pipeline stages before the iteration log, but the helper returns early on a
stage that has tracked nothing.

Thread: https://github.com/NVIDIA/Megatron-LM/issues/4745 ("Deepseek V4 PP deadlock when some pipeline stages have no CSA layers")
Project: NVIDIA/Megatron-LM
What hung: "`DSAIndexerLossLoggingHelper.reduce_loss_in_tracker()` early-returns when "values" is not
in the tracker. This skips the `all_reduce` over `get_pipeline_model_parallel_group()`, causing other
PP ranks to block indefinitely on that collective." A stage holding only dense (or non-indexed)
layers never fills the tracker.
Fix (maintainers: "fixed it in https://github.com/NVIDIA/Megatron-LM/pull/4518"): every stage takes
part in the reduction, contributing zeros when it tracked nothing.
Expected rankcheck finding: RC102 on the early `return`, taken on stages whose tracker is empty,
before the pipeline-group all_reduce.
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
    def reduce_loss_in_tracker():
        tracker = DSAIndexerLossLoggingHelper.tracker
        if "values" not in tracker:
            return  # expect: RC102
        values = tracker["values"]
        torch.distributed.all_reduce(values, group=parallel_state.get_pipeline_model_parallel_group())
        torch.distributed.all_reduce(values, group=parallel_state.get_data_parallel_group(), op=torch.distributed.ReduceOp.AVG)

    @staticmethod
    def track_indexer_metrics(loss_scale: float, iteration: int, writer, total_loss_dict=None):
        DSAIndexerLossLoggingHelper.reduce_loss_in_tracker()
        tracker = DSAIndexerLossLoggingHelper.tracker
        if "values" not in tracker:
            return
        loss = tracker["values"] * loss_scale
        if total_loss_dict is not None:
            total_loss_dict["indexer loss"] = loss.mean()
        if writer is not None:
            writer.add_scalar("indexer loss", loss.mean(), iteration)
        tracker["values"].zero_()
