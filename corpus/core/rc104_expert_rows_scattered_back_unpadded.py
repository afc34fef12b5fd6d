"""The look-alike of safe_expert_outputs_scattered_into_a_gathered_buffer.py: the layer hands the
coordinator only the rows its experts took (`tokens[rows]`), as many as this rank's gate chose,
so the reduce-scatter's input has a length of its own on every rank."""
import torch
import torch.distributed as dist


class GroupCoordinator:
    def __init__(self, group) -> None:
        self.group = group
        self.world_size = dist.get_world_size(group)

    def all_gather(self, tensor):
        out = torch.empty((self.world_size * tensor.shape[0],) + tuple(tensor.shape[1:]), dtype=tensor.dtype)
        dist.all_gather_into_tensor(out, tensor, group=self.group)
        return out

    def reduce_scatter(self, tensor):
        out = torch.empty((tensor.shape[0] // self.world_size,) + tuple(tensor.shape[1:]), dtype=tensor.dtype)
        dist.reduce_scatter_tensor(out, tensor, group=self.group)  # expect: RC104
        return out


def moe_forward(ep: GroupCoordinator, gate, experts, offset: int, hidden_states):
    tokens = ep.all_gather(hidden_states)
    ids = torch.topk(gate(tokens), 2, dim=-1).indices
    rows = (ids == offset).any(-1).nonzero().squeeze(-1)
    return ep.reduce_scatter(experts[0](tokens[rows]))


def main(hidden_states, gate, experts):
    dist.init_process_group("gloo", timeout=__import__("datetime").timedelta(minutes=5))
    ep = GroupCoordinator(dist.group.WORLD)
    return moe_forward(ep, gate, experts, dist.get_rank() * len(experts), hidden_states)
