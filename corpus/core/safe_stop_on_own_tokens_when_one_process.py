"""torchtune-shaped generation loop: with one process (`world_size == 1`) the loop stops as soon as
this process's sequences have all hit a stop token; with several, every rank all-reduces its
done flag each step and they stop together. The early `break` is in the one-process arm, where
there is no other rank to leave waiting.
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
        next_token = model(tokens)[:, -1].argmax(-1)
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)
        stop_token_reached |= next_token == stop_token
        if world_size == 1:
            if stop_token_reached.all():
                break
        else:
            all_done = stop_token_reached.all().int()
            dist.all_reduce(all_done)
            if all_done == world_size:
                break
    return tokens
