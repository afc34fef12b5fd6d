"""accelerate's `recursively_apply(func, data, test_type=is_torch_tensor)`: the reduction it is
given runs on every tensor of a nested structure, which is alike on every rank (only the values
differ), so every rank reduces the same tensors in the same order. The type test comes from the
parameter's default, a function of the project's."""
import torch
import torch.distributed as dist


def is_torch_tensor(obj) -> bool:
    return isinstance(obj, torch.Tensor)


def recursively_apply(func, data, *args, test_type=is_torch_tensor, **kwargs):
    if isinstance(data, (tuple, list)):
        return type(data)(recursively_apply(func, o, *args, test_type=test_type, **kwargs) for o in data)
    if isinstance(data, dict):
        return {k: recursively_apply(func, v, *args, test_type=test_type, **kwargs) for k, v in data.items()}
    if test_type(data):
        return func(data, *args, **kwargs)
    return data


def reduce(tensor, reduction: str = "mean"):
    def _reduce_across_processes(t, reduction="mean"):
        cloned = t.clone()
        dist.all_reduce(cloned)
        if reduction == "mean":
            cloned /= dist.get_world_size()
        return cloned

    return recursively_apply(_reduce_across_processes, tensor, reduction=reduction)


def log_metrics(batch_metrics: dict) -> dict:
    return reduce(batch_metrics)
