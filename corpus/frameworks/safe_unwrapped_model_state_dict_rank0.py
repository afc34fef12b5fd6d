"""Unknown stays unknown: `state_dict()` of a model that was never wrapped (plain nn.Module) is local,
so saving it on rank 0 only is fine."""
import torch
import torch.distributed as dist


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(10, 2)

    def forward(self, x):
        return self.fc(x)


def main() -> None:
    dist.init_process_group("gloo")
    model = Net()
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), "init.pt")
    dist.barrier()
