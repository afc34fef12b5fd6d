"""Sharded inference: every rank answers its slice of the benchmark, rank 0 merges the slices."""
import os
import os.path as osp

import torch.distributed as dist

from .smp import dump, get_rank_and_world_size, load


def infer_data(model, dataset, out_file, verbose=False):
    rank, world_size = get_rank_and_world_size()
    indices = list(range(len(dataset)))[rank::world_size]
    results = {}
    for i in indices:
        item = dataset[i]
        results[item["index"]] = model.generate(message=dataset.build_prompt(item), dataset=dataset.name)
        if verbose:
            print(results[item["index"]], flush=True)
    dump(results, out_file)


def infer_data_job(model, work_dir, model_name, dataset, verbose=False):
    rank, world_size = get_rank_and_world_size()
    result_file = osp.join(work_dir, f"{model_name}_{dataset.name}.pkl")
    part_tmpl = osp.join(work_dir, "{}" + f"{world_size}_{dataset.name}.pkl")
    infer_data(model, dataset, part_tmpl.format(rank), verbose=verbose)
    if world_size > 1:
        dist.barrier()
    if rank == 0:
        merged = {}
        for r in range(world_size):
            merged.update(load(part_tmpl.format(r)))
            os.remove(part_tmpl.format(r))
        dump(merged, result_file)
    return model
