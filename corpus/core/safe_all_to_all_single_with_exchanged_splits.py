"""The look-alike of rc104_all_to_all_single_without_splits_of_per_rank_tokens.py: the ranks first
exchange how many tokens each sends to each, and pass those split sizes, so tensors of different
sizes are what the call expects."""
import torch
import torch.distributed as dist


def dispatch(hidden: torch.Tensor, expert_of_token: torch.Tensor) -> torch.Tensor:
    world = dist.get_world_size()
    send_counts = torch.bincount(expert_of_token, minlength=world)
    recv_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts)
    order = torch.argsort(expert_of_token)
    routed = hidden[order]
    received = hidden.new_empty((int(recv_counts.sum()), hidden.shape[1]))
    dist.all_to_all_single(received, routed, output_split_sizes=recv_counts.tolist(), input_split_sizes=send_counts.tolist())
    return received
