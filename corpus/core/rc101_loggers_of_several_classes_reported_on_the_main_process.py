"""A trainer holds a list of loggers of several classes and reports to each on the main process
only: the metric-averaging logger's `log` all-gathers, so whichever list holds it, the main
process waits in that gather alone (AgileRL#586's shape)."""
import torch
import torch.distributed as dist


class Logger:
    def log(self, metrics, step):
        raise NotImplementedError


class StdOutLogger(Logger):
    def log(self, metrics, step):
        print(step, metrics)


class AveragingLogger(Logger):
    def log(self, metrics, step):
        values = torch.tensor(list(metrics.values()))
        dist.all_reduce(values)
        print(step, values / dist.get_world_size())


class Trainer:
    def __init__(self, loggers):
        self.loggers = loggers

    def report(self, metrics, step):
        for logger in self.loggers:
            logger.log(metrics, step)


def main(metrics, steps):
    trainer = Trainer([StdOutLogger(), AveragingLogger()])
    for step in range(steps):
        if dist.get_rank() == 0:
            trainer.report(metrics, step)  # expect: RC101
