"""The look-alike of rc103_patience_reset_after_an_early_return_off_rank_zero.py, fixed as PyText
fixed it: every rank resets its counter and records the best metric (every rank evaluates the
same unsharded set, so they agree), and only the copy of the weights stays behind the rank test.
"""
import torch
import torch.distributed as dist


class TrainingState:
    def __init__(self, model, rank):
        self.model = model
        self.rank = rank
        self.epochs_since_improvement = 0
        self.best_metric = None
        self.best_state = None


class Trainer:
    def __init__(self, patience):
        self.patience = patience

    def keep_going(self, state):
        return state.epochs_since_improvement < self.patience

    def update_best(self, state, metric):
        state.epochs_since_improvement = 0
        state.best_metric = metric
        if state.rank != 0:
            return
        state.best_state = {k: v.cpu() for k, v in state.model.state_dict().items()}

    def train(self, model, loader, eval_metric):
        state = TrainingState(model, dist.get_rank())
        while self.keep_going(state):
            state.epochs_since_improvement += 1
            for batch in loader:
                loss = model(batch).mean()
                loss.backward()
                for p in model.parameters():
                    dist.all_reduce(p.grad)
            metric = eval_metric(model)
            if state.best_metric is None or metric > state.best_metric:
                self.update_best(state, metric)
        return state.best_metric
