"""Trimmed vllm/v1/worker/dp_utils.py: before every forward the DP ranks agree on the padded
batch size with one all-reduce over the DP group (CPU/gloo)."""
import torch
import torch.distributed as dist

from vllm_lite.distributed.parallel_state import get_dp_group


def _run_ar(num_tokens_unpadded, dp_size, dp_rank):
    tensor = torch.zeros(2, dp_size, dtype=torch.int32, device="cpu")
    tensor[0][dp_rank] = num_tokens_unpadded
    tensor[1][dp_rank] = 1 if num_tokens_unpadded > 0 else 0
    dist.all_reduce(tensor, group=get_dp_group().cpu_group)
    return tensor


def coordinate_batch_across_dp(num_tokens_unpadded, parallel_config):
    """Returns (padded num tokens, per-DP-rank token counts); a no-op without DP."""
    dp_size = parallel_config.data_parallel_size
    if dp_size == 1:
        return num_tokens_unpadded, None
    tensor = _run_ar(num_tokens_unpadded, dp_size, parallel_config.data_parallel_rank)
    num_tokens_across_dp = tensor[0]
    max_tokens = int(num_tokens_across_dp.max().item())
    return max(max_tokens, 1), num_tokens_across_dp
