"""SpeechBrain's `run_on_main(func, args, kwargs)` runs what it is given on the main process only,
then holds every process in a barrier. Passing it a function that itself communicates (a
checkpointer whose save broadcasts the folder name, speechbrain#2401) leaves the main process in
that broadcast and the others in the runner's barrier. Each caller passes its own function; the
runner itself is fine."""
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


class Checkpointer:
    def save_and_keep_only(self, meta=None):
        name = [f"ckpt-{meta}"]
        dist.broadcast_object_list(name, src=0)
        torch.save(meta, name[0])


def write_summary(path: str) -> None:
    with open(path, "w") as f:
        f.write("done")


def average_metric(value: float) -> float:
    t = torch.tensor([value])
    dist.all_reduce(t)
    return t.item()


class Trainer:
    def __init__(self, checkpointer: Checkpointer):
        self.checkpointer = checkpointer

    def on_stage_end(self, stats: dict) -> None:
        run_on_main(self.checkpointer.save_and_keep_only, kwargs={"meta": stats})  # expect: RC101
        run_on_main(write_summary, args=["summary.txt"])

    def on_fit_end(self, loss: float) -> None:
        run_on_main(average_metric, args=[loss])  # expect: RC101
