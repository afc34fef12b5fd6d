"""A trainer holds the task it was given (a registry builds it, so its class is not written at the
call), and only rank 0 asks the task to reduce its metrics: the task's method all-reduces, and the
other ranks never join. The project defines `reduce_metrics` in one class and its subclass, so
`self.task.reduce_metrics(...)` is that method whatever the registry returned (fairseq's shape:
`self.task.train_step`, `self.task.get_batch_iterator`)."""
import torch
import torch.distributed as dist


class Task:
    def reduce_metrics(self, logs):
        total = torch.tensor([sum(log["loss"] for log in logs)])
        dist.all_reduce(total)
        return total.item()


class TranslationTask(Task):
    def reduce_metrics(self, logs):
        return super().reduce_metrics(logs)


TASKS = {"translation": TranslationTask}


class Trainer:
    def __init__(self, task):
        self.task = task

    def log_epoch(self, logs):
        if dist.get_rank() == 0:
            loss = self.task.reduce_metrics(logs)  # expect: RC101
            print(f"loss {loss:.3f}")


def main(name, logs):
    trainer = Trainer(TASKS[name]())
    trainer.log_epoch(logs)
