"""mmcv/mmengine style: `rank, world_size = get_dist_info()`; only rank 0 evaluates, and the
evaluation's collect_results all-gathers the results of every rank."""
import torch
import torch.distributed as dist
from mmcv.runner import get_dist_info


def collect_results(results: list, size: int) -> list:
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, results)
    return [r for part in gathered for r in part][:size]


def single_gpu_test(model, data_loader) -> list:
    outputs = []
    for data in data_loader:
        with torch.no_grad():
            outputs.append(model(data))
    return collect_results(outputs, len(data_loader.dataset))


def after_train_epoch(model, data_loader) -> None:
    rank, world_size = get_dist_info()
    if rank == 0:
        results = single_gpu_test(model, data_loader)  # expect: RC101
        print(len(results), world_size)
