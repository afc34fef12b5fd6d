"""The look-alike: the same loggers, reported to on every process (each logger decides for itself
what only the main process prints), and the main-process-only call goes to a logger of one class
whose `log` communicates with nobody."""
import torch
import torch.distributed as dist


class Logger:
    def log(self, metrics, step):
        raise NotImplementedError


class StdOutLogger(Logger):
    def log(self, metrics, step):
        if dist.get_rank() == 0:
            print(step, metrics)


class AveragingLogger(Logger):
    def log(self, metrics, step):
        values = torch.tensor(list(metrics.values()))
        dist.all_reduce(values)
        if dist.get_rank() == 0:
            print(step, values / dist.get_world_size())


class Trainer:
    def __init__(self, loggers, console):
        self.loggers = loggers
        self.console = console

    def report(self, metrics, step):
        for logger in self.loggers:
            logger.log(metrics, step)


def main(metrics, steps):
    trainer = Trainer([StdOutLogger(), AveragingLogger()], StdOutLogger())
    for step in range(steps):
        trainer.report(metrics, step)
        if dist.get_rank() == 0:
            trainer.console.log(metrics, step)
