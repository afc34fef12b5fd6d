"""Per-token log-probs and entropy of response tokens (trimmed loss_hub.math_utils)."""
import torch


def compute_log_probs(logits: torch.Tensor, tokens: torch.Tensor, tp_group) -> torch.Tensor:
    # TP is 1 here, so the vocab-parallel cross-entropy is a local log-softmax
    log_probs = torch.log_softmax(logits, dim=-1)
    return log_probs.gather(-1, tokens.unsqueeze(-1))


def compute_entropy_from_logits(logits: torch.Tensor, tp_group) -> torch.Tensor:
    log_probs = torch.log_softmax(logits, dim=-1)
    return -(log_probs.exp() * log_probs).sum(-1)


def calculate_log_probs_and_entropy(
    logits,
    tokens,
    tp_group,
    with_entropy: bool = False,
    entropy_requires_grad: bool = True,
    chunk_size: int = -1,
):
    """`logits` arrive in model precision (bf16/fp16); every chunk is upcast to fp32 before the CE."""
    logits = logits.contiguous()
    entropy = None

    def compute_entropy(logits_chunk):
        if entropy_requires_grad:
            return compute_entropy_from_logits(logits_chunk.to(torch.float32, copy=True), tp_group)
        with torch.no_grad():
            return compute_entropy_from_logits(logits_chunk.detach().to(torch.float32, copy=True), tp_group)

    if logits.size(0) != 0:
        if chunk_size > 0:
            num_chunks = (logits.size(0) - 1) // chunk_size + 1
            tokens_chunks = tokens.chunk(num_chunks, dim=0)
            logits_chunks = logits.chunk(num_chunks, dim=0)
            log_prob = torch.cat(
                [
                    compute_log_probs(lc.to(torch.float32, copy=True), tc, tp_group)
                    for tc, lc in zip(tokens_chunks, logits_chunks, strict=True)
                ],
                dim=0,
            )
            if with_entropy:
                entropy = torch.cat([compute_entropy(lc) for lc in logits_chunks], dim=0)
        else:
            log_prob = compute_log_probs(logits.to(torch.float32, copy=True), tokens, tp_group)
            if with_entropy:
                entropy = compute_entropy(logits)
    else:
        # no response logits in this rank's part of the sequence
        log_prob = logits.new_zeros((0,))
        if with_entropy:
            entropy = logits.new_zeros((0,))

    return log_prob, entropy
