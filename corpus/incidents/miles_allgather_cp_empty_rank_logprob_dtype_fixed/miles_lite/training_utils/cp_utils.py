"""Context-parallel helpers (trimmed): move per-sample response tensors from the allgather-CP layout,
where each rank holds one contiguous chunk of the packed sequence, to the zigzag layout the loss uses."""
import torch
import torch.distributed as dist
import torch.nn.functional as F

from miles_lite.training_utils.parallel import get_parallel_state


def slice_log_prob_with_cp(log_prob: torch.Tensor, total_length: int, response_length: int) -> torch.Tensor:
    """Keep this rank's two zigzag chunks of a full response tensor."""
    cp = get_parallel_state().cp
    if cp.size == 1:
        return log_prob
    prompt_length = total_length - response_length
    chunk_size = (total_length + 2 * cp.size - 1) // (2 * cp.size)
    positions = torch.arange(prompt_length - 1, total_length - 1, device=log_prob.device)
    first = (positions >= chunk_size * cp.rank) & (positions < chunk_size * (cp.rank + 1))
    second = (positions >= chunk_size * (2 * cp.size - cp.rank - 1)) & (positions < chunk_size * (2 * cp.size - cp.rank))
    return log_prob[first | second]


def allgather_cp_redistribute(res, *, logits, args, total_lengths, response_lengths):
    """Rebuild every sample's full response tensor with one differentiable all-reduce over the CP
    group (each rank contributes its contiguous part, zeros elsewhere), then re-slice it zigzag.
    `res` maps a metric name to a list of per-sample tensors and is modified in place."""
    cp = get_parallel_state().cp
    logits_local_len = logits.size(1)  # logits: [1, T_local, V]
    chunk_start = cp.rank * logits_local_len
    chunk_end = chunk_start + logits_local_len

    for key, values in res.items():
        full_resps = []
        seq_start = 0
        for value, total_length, response_length in zip(values, total_lengths, response_lengths, strict=False):
            prompt_length = total_length - response_length
            logit_global_start = seq_start + prompt_length - 1
            logit_global_end = seq_start + total_length - 1
            s = max(logit_global_start, chunk_start)
            e = min(logit_global_end, chunk_end)
            if e <= s:
                # This rank has no response logprobs for this sample
                full_resp = torch.zeros(response_length, dtype=value.dtype, device=value.device, requires_grad=True)
            else:
                full_resp = F.pad(value, (s - logit_global_start, response_length - (e - logit_global_start)))
            assert full_resp.size(0) == response_length
            full_resps.append(full_resp)
            seq_start += total_length

        # Single differentiable all-reduce to gather the full responses from all CP ranks
        all_cat = torch.cat(full_resps, dim=0)
        all_cat = dist.nn.all_reduce(all_cat, group=cp.group)

        res[key] = [
            slice_log_prob_with_cp(full_resp, total_length, response_length)
            for full_resp, total_length, response_length in zip(
                all_cat.split(response_lengths, dim=0), total_lengths, response_lengths, strict=False
            )
        ]
