"""vLLM-shaped expert-parallel MoE layer: the group coordinator all-gathers every rank's tokens into
a buffer it allocates with the group's size, each rank's experts write their rows of an output
shaped like it (`out[rows] += ...`, the rows this rank's experts own), and the coordinator
reduce-scatters that back into a buffer of the local size. The rows each rank writes are its own;
the shapes are the same on every rank. (The look-alike scatters back a tensor whose length is the
number of rows this rank's experts took.)"""
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
        dist.reduce_scatter_tensor(out, tensor, group=self.group)
        return out


class FusedMoE(torch.nn.Module):
    def __init__(self, hidden: int, num_experts: int, ep_rank: int, ep_size: int) -> None:
        super().__init__()
        self.local = torch.nn.ModuleList(torch.nn.Linear(hidden, hidden) for _ in range(num_experts // ep_size))
        self.offset = ep_rank * (num_experts // ep_size)
        self.gate = torch.nn.Linear(hidden, num_experts, bias=False)

    def forward(self, ep: GroupCoordinator, hidden_states):
        tokens = ep.all_gather(hidden_states)
        ids = torch.topk(self.gate(tokens), 2, dim=-1).indices
        out = torch.zeros_like(tokens)
        for j, expert in enumerate(self.local):
            rows = (ids == self.offset + j).any(-1).nonzero().squeeze(-1)
            if rows.numel():
                out[rows] += expert(tokens[rows])
        return ep.reduce_scatter(out)


def main(hidden_states):
    dist.init_process_group("gloo", timeout=__import__("datetime").timedelta(minutes=5))
    ep = GroupCoordinator(dist.group.WORLD)
    layer = FusedMoE(16, 8, dist.get_rank(), dist.get_world_size())
    return layer(ep, hidden_states)
