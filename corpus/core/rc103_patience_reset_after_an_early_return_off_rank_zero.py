"""Early stopping with the patience counter on a training-state object: every epoch adds one,
and `update_best` sets it back to 0 when the model improved, but it returns at once on every
rank but 0 (only rank 0 keeps the best weights). The other ranks' counters only grow, so
`keep_going` turns false on them epochs before rank 0's, and rank 0 waits alone in the next
epoch's all-reduce (PyText's trainer before pytext#585). Look-alike:
safe_patience_reset_on_every_rank_before_the_rank_zero_copy.py.
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
        if state.rank != 0:
            return
        state.epochs_since_improvement = 0
        state.best_metric = metric
        state.best_state = {k: v.cpu() for k, v in state.model.state_dict().items()}

    def train(self, model, loader, eval_metric):
        state = TrainingState(model, dist.get_rank())
        while self.keep_going(state):  # expect: RC103
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
