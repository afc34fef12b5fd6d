"""The look-alike of a main-process runner: every function its callers hand it works on the
main process's own files, and the collectives (a broadcast of the folder name) are issued by
every rank before or after it; a runner that runs its function on every rank may be handed one
that communicates."""
import torch
import torch.distributed as dist


def if_main_process() -> bool:
    return dist.get_rank() == 0


def run_on_main(func, args=None, kwargs=None):
    args = args or []
    kwargs = kwargs or {}
    if if_main_process():
        func(*args, **kwargs)
    dist.barrier()


def run_everywhere(func, *args):
    result = func(*args)
    dist.barrier()
    return result


class Checkpointer:
    def folder(self, step: int) -> str:
        name = [f"ckpt-{step}"]
        dist.broadcast_object_list(name, src=0)
        return name[0]

    def write(self, folder: str, state: dict) -> None:
        torch.save(state, folder + "/state.pt")


def average_metric(value: float) -> float:
    t = torch.tensor([value])
    dist.all_reduce(t)
    return t.item()


class Trainer:
    def __init__(self, checkpointer: Checkpointer):
        self.checkpointer = checkpointer

    def on_stage_end(self, step: int, state: dict) -> None:
        folder = self.checkpointer.folder(step)
        run_on_main(self.checkpointer.write, args=[folder, state])

    def on_fit_end(self, loss: float) -> float:
        return run_everywhere(average_metric, loss)
