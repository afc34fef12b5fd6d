"""The look-alike of safe_stop_on_own_tokens_when_one_process: the early stop on this rank's own
tokens is in the distributed arm (`world_size > 1`), before the step's all_reduce of the logits'
norm. A rank whose sequences all finished leaves the loop; the others wait in the all_reduce.
"""
import torch
import torch.distributed as dist


def get_world_size_and_rank():
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


def generate(model, batch, max_new_tokens, stop_token):
    world_size, rank = get_world_size_and_rank()
    tokens = batch["input_ids"]
    stop_token_reached = torch.zeros(tokens.size(0), dtype=torch.bool)
    for _ in range(max_new_tokens):
        logits = model(tokens)[:, -1]
        next_token = logits.argmax(-1)
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)
        stop_token_reached |= next_token == stop_token
        if world_size > 1:
            if stop_token_reached.all():
                break  # expect: RC103
            norm = logits.norm()
            dist.all_reduce(norm)
    return tokens
