"""Response-aligned logits and the per-token log-probs of the policy (trimmed logit_processors)."""
import torch

from miles_lite.training_utils.cp_utils import allgather_cp_redistribute
from miles_lite.training_utils.loss_hub.math_utils import calculate_log_probs_and_entropy
from miles_lite.training_utils.parallel import get_parallel_state


def get_responses(logits, *, args, unconcat_tokens, total_lengths, response_lengths):
    """Yield `(logits_chunk, tokens_chunk)` for the response part of every packed sample that lies
    in this rank's contiguous chunk of the sequence (allgather CP); an empty pair when none does."""
    assert logits.dtype in (torch.float32, torch.bfloat16, torch.float16), f"{logits.dtype}"
    assert logits.size(0) == 1, f"{logits.shape}"
    logits = logits.squeeze(0)
    if args.rollout_temperature > 0 and args.rollout_temperature != 1.0:
        logits = logits.div(args.rollout_temperature)

    cp = get_parallel_state().cp
    logits_local_len = logits.size(0)
    chunk_start = cp.rank * logits_local_len
    chunk_end = chunk_start + logits_local_len
    seq_start = 0
    for tokens, total_length, response_length in zip(unconcat_tokens, total_lengths, response_lengths, strict=False):
        prompt_length = total_length - response_length
        logit_global_start = seq_start + prompt_length - 1
        logit_global_end = seq_start + total_length - 1
        s = max(logit_global_start, chunk_start)
        e = min(logit_global_end, chunk_end)
        if e <= s:
            logits_chunk = logits[0:0]
            tokens_chunk = tokens[0:0]
        else:
            logits_chunk = logits[s - chunk_start : e - chunk_start]
            tokens_chunk = tokens[(s + 1) - seq_start : (e + 1) - seq_start]
        assert logits_chunk.size(0) == tokens_chunk.size(0)
        seq_start += total_length
        yield logits_chunk, tokens_chunk


def get_log_probs_and_entropy(
    logits, *, args, unconcat_tokens, total_lengths, response_lengths, with_entropy=False, entropy_requires_grad=True
):
    parallel_state = get_parallel_state()
    log_probs_list, entropy_list = [], []
    for logits_chunk, tokens_chunk in get_responses(
        logits,
        args=args,
        unconcat_tokens=unconcat_tokens,
        total_lengths=total_lengths,
        response_lengths=response_lengths,
    ):
        log_prob, entropy = calculate_log_probs_and_entropy(
            logits_chunk,
            tokens_chunk,
            parallel_state.tp.group,
            with_entropy=with_entropy,
            entropy_requires_grad=entropy_requires_grad,
            chunk_size=args.log_probs_chunk_size,
        )
        log_probs_list.append(log_prob.squeeze(-1))
        if with_entropy:
            entropy_list.append(entropy)

    res = {"log_probs": log_probs_list}
    if with_entropy:
        res["entropy"] = entropy_list

    # turn the allgather-CP layout into the zigzag ring-attention layout
    if args.allgather_cp:
        allgather_cp_redistribute(
            res, logits=logits, args=args, total_lengths=total_lengths, response_lengths=response_lengths
        )
    return res
