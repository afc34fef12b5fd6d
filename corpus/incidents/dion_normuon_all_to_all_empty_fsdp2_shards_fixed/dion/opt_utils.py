"""Optimizer utilities of dion (trimmed): DTensor/local conversion and the small async runtime that
interleaves the communication of several optimizer tasks.

Part of the reconstruction of https://github.com/microsoft/dion/pull/74; see
dion/megabatch_base.py for the incident description.
"""
from typing import Generator, List, Optional, Union

from torch import Tensor
from torch.distributed.tensor import DTensor


def to_local(tensor: Union[Tensor, List[Tensor]]) -> Union[Tensor, List[Tensor]]:
    """Convert a single DTensor or list of DTensors to local tensors (no-op for regular tensors)."""
    if isinstance(tensor, Tensor):
        return tensor.to_local() if isinstance(tensor, DTensor) else tensor
    return [t.to_local() if isinstance(t, DTensor) else t for t in tensor]


class AsyncTask:
    """Wraps a Python generator to run until its next yield (a pending communication)."""

    def __init__(self, generator: Generator[None, None, None]):
        self._generator = generator
        self.run()  # Start running the generator

    def run(self) -> bool:
        try:
            next(self._generator)
            return True
        except StopIteration:
            pass
        return False


class AsyncRuntime:
    """Event loop for running multiple async tasks concurrently."""

    def __init__(self, task_gen: Generator["AsyncTask", None, None], max_concurrent_tasks: int):
        if max_concurrent_tasks <= 0:
            raise ValueError(f"{max_concurrent_tasks=} cannot be <= 0")
        self._task_gen = task_gen
        self._max_concurrent_tasks = max_concurrent_tasks

    def _get_next_task(self) -> Optional["AsyncTask"]:
        try:
            return next(self._task_gen)
        except StopIteration:
            return None

    def run(self):
        have_new_tasks = True
        previous_tasks: List["AsyncTask"] = []
        while have_new_tasks or previous_tasks:
            running_tasks = []
            if have_new_tasks and len(previous_tasks) < self._max_concurrent_tasks:
                new_task = self._get_next_task()
                if new_task is not None:
                    running_tasks.append(new_task)
                else:
                    have_new_tasks = False
            for task in previous_tasks:
                if task.run():
                    running_tasks.append(task)
            previous_tasks = running_tasks
