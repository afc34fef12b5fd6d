"""detectron2-style evaluation hook: the main process alone evaluates, and the evaluator's
`all_gather_object` runs inside the evaluation. A library
call whose name says it tests the rank (`comm.is_main_process()`) is that test.
"""
import torch
import torch.distributed as dist
from detectron2.utils import comm


def evaluate(model, loader):
    predictions = [model(batch) for batch in loader]
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, predictions)
    return sum(len(p) for p in gathered)


def after_train(model, loader):
    if comm.is_main_process():
        result = evaluate(model, loader)  # expect: RC101
        torch.save(result, "eval.pt")
