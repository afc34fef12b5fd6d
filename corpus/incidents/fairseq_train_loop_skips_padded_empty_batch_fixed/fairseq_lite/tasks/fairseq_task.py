"""Trimmed fairseq/tasks/fairseq_task.py: one forward/backward of the criterion on a sample."""


class FairseqTask:
    def __init__(self, args):
        self.args = args

    def train_step(self, sample, model, criterion, optimizer, ignore_grad=False):
        model.train()
        loss, sample_size, logging_output = criterion(model, sample)
        if ignore_grad:
            loss *= 0
        optimizer.backward(loss)
        return loss, sample_size, logging_output

    def aggregate_logging_outputs(self, logging_outputs, criterion):
        return criterion.__class__.aggregate_logging_outputs(logging_outputs)

    def grad_denom(self, sample_sizes, criterion):
        return sum(sample_sizes)
