"""Look-alike of rc101_library_is_main_process_call: every process evaluates (the gather inside
runs everywhere); only writing the result is left to the process that
`comm.is_main_process()` names.
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
    result = evaluate(model, loader)
    if comm.is_main_process():
        torch.save(result, "eval.pt")
