"""A runner whose test of who runs the callback is a default argument, the main-process test: a
caller that leaves it out and passes a callback that all-reduces leaves the other ranks out of
that all-reduce."""
import torch
import torch.distributed as dist


def is_main_process() -> bool:
    return dist.get_rank() == 0


def run_if(func, *args, when=is_main_process):
    if when():
        return func(*args)
    return None


def mean_loss(loss: torch.Tensor) -> torch.Tensor:
    dist.all_reduce(loss)
    return loss / dist.get_world_size()


def write_log(text: str) -> None:
    print(text)


def end_of_epoch(loss: torch.Tensor) -> None:
    run_if(write_log, "epoch done")
    run_if(mean_loss, loss)  # expect: RC101
