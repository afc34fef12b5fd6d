"""lmms-eval's evaluator (trimmed): each rank builds the requests of its share of every task's
documents, the ranks agree on the per-rank request counts and pad to the largest, run the model,
then gather logged samples and per-sample metrics to rank 0, which aggregates.

Part of the reconstruction of https://github.com/EvolvingLMMs-Lab/lmms-eval/pull/1304; see
lmms_eval/__main__.py for the incident description.
"""
import collections
import itertools
import os
from typing import List, Optional, Union

import torch
import torch.distributed as dist
from loguru import logger as eval_logger

import lmms_eval.models
from lmms_eval.tasks import TaskManager, get_task_dict


def simple_evaluate(
    model,
    model_args: Optional[Union[str, dict]] = None,
    tasks: Optional[List[Union[str, dict, object]]] = None,
    batch_size: Optional[Union[int, str]] = None,
    device: Optional[str] = None,
    limit: Optional[Union[int, float]] = None,
    log_samples: bool = True,
    gen_kwargs: Optional[str] = None,
    task_manager: Optional[TaskManager] = None,
    bootstrap_iters: int = 100000,
    distributed_executor_backend: str = "accelerate",
    cli_args=None,
):
    """Instantiate and evaluate a model on a list of tasks; returns the results dict on rank 0 and
    None on the other ranks."""
    if isinstance(model_args, str) or model_args is None:
        lm = lmms_eval.models.get_model(model).create_from_arg_string(
            model_args or "",
            {"batch_size": batch_size, "device": device},
        )
    else:
        lm = lmms_eval.models.get_model(model).create_from_arg_obj(model_args, {"batch_size": batch_size, "device": device})

    task_dict = get_task_dict(tasks, task_manager)
    for task_name, task_obj in task_dict.items():
        if gen_kwargs is not None:
            task_obj.set_config(key="generation_kwargs", value=gen_kwargs, update=True)

    results = evaluate(
        lm=lm,
        task_dict=task_dict,
        limit=limit,
        bootstrap_iters=bootstrap_iters,
        log_samples=log_samples,
        distributed_executor_backend=distributed_executor_backend,
        cli_args=cli_args,
    )
    if lm.rank == 0:
        results["config"] = {"model": model, "model_args": model_args, "batch_size": batch_size, "limit": limit}
        return results
    return None


def evaluate(
    lm,
    task_dict,
    limit: Optional[int] = None,
    bootstrap_iters: Optional[int] = 100000,
    log_samples: bool = True,
    distributed_executor_backend: str = "accelerate",
    cli_args=None,
):
    requests = collections.defaultdict(list)
    padding_requests = collections.defaultdict(int)

    global_rank = int(os.environ.get("RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))

    eval_tasks = list(task_dict.values())
    for task in eval_tasks:
        # Each rank builds the requests of its own documents (doc_id % world_size == rank).
        task.build_all_requests(limit=limit, rank=lm.rank, world_size=lm.world_size)
        for instance in task.instances:
            requests[instance.request_type].append(instance)

        if world_size > 1:
            if distributed_executor_backend == "accelerate":
                instances_rnk = torch.tensor(len(task._instances), device=lm.device)
                gathered_item = lm.accelerator.gather(instances_rnk).cpu().detach().numpy().tolist()
            elif distributed_executor_backend == "torchrun":
                instances_rnk = torch.tensor([len(task._instances)], device=lm.device)
                gathered_item = torch.zeros(world_size, dtype=instances_rnk.dtype, device=lm.device)
                dist.all_gather_into_tensor(gathered_item, instances_rnk)
                gathered_item = gathered_item.cpu().detach().numpy().tolist()
            else:
                raise ValueError(f"Invalid distributed_executor_backend: {distributed_executor_backend}.")
            # compute number of pseudo-batches to pad with (FSDP/DDP require even batches among ranks)
            numpad = max(gathered_item) - gathered_item[lm.rank]
            padding_requests[task.OUTPUT_TYPE] += numpad

    # Run LMM on inputs, get all outputs; the request types are the same on every rank.
    for reqtype in sorted(set(t.OUTPUT_TYPE for t in eval_tasks)):
        reqs = requests.get(reqtype, [])
        eval_logger.info("Running {} requests".format(reqtype))
        cloned_reqs = []
        for req in reqs:
            cloned_reqs.extend([req] * req.repeats)
        if (world_size > 1) and (padding_requests[reqtype] > 0) and reqs:
            for _ in range(padding_requests[reqtype]):
                cloned_reqs.extend([reqs[-1]] * reqs[-1].repeats)

        resps = getattr(lm, reqtype)(cloned_reqs)
        for x, req in zip(resps, cloned_reqs):
            req.resps.append(x)

        if world_size > 1:
            if distributed_executor_backend == "accelerate":
                lm.accelerator.wait_for_everyone()
            elif distributed_executor_backend == "torchrun":
                dist.barrier()

    lm.clean()

    # Postprocess outputs on this rank's documents.
    RANK = global_rank
    WORLD_SIZE = world_size
    for task in eval_tasks:
        task.apply_filters()
        instances_by_doc_id = collections.defaultdict(list)
        for instance in task.instances:
            instances_by_doc_id[instance.doc_id].append(instance)
        for doc_id, doc in task.doc_iterator(rank=RANK, limit=limit, world_size=WORLD_SIZE):
            reqs = instances_by_doc_id[doc_id]
            metrics = task.process_results(doc, [req.filtered_resps for req in reqs])
            if log_samples:
                task.logged_samples.append({"doc_id": doc_id, "target": task.doc_to_target(doc), "resps": [req.resps for req in reqs]})
            for metric, value in metrics.items():
                task.sample_metrics[metric].append(value)

    if WORLD_SIZE > 1:
        # gather logged samples and per-sample metrics from all ranks to rank 0
        for task in eval_tasks:
            if log_samples:
                full_samples = [None] * WORLD_SIZE if RANK == 0 else None
                torch.distributed.gather_object(obj=task.logged_samples, object_gather_list=full_samples, dst=0)
                if RANK == 0:
                    task.logged_samples = list(itertools.chain.from_iterable(full_samples))

            # All ranks iterate over the metric keys in the same (canonical, broadcast) order.
            all_metric_keys = list(task.sample_metrics.keys())
            gathered_keys = [None] * WORLD_SIZE if RANK == 0 else None
            torch.distributed.gather_object(obj=all_metric_keys, object_gather_list=gathered_keys, dst=0)
            canonical_keys = sorted(set(itertools.chain.from_iterable(k for k in gathered_keys if k)), key=str) if RANK == 0 else None
            broadcast_list = [canonical_keys] if RANK == 0 else [None]
            torch.distributed.broadcast_object_list(broadcast_list, src=0)
            for metric in broadcast_list[0]:
                pre_gather = task.sample_metrics[metric] if metric in task.sample_metrics else []
                metric_list = [None] * WORLD_SIZE if RANK == 0 else None
                torch.distributed.gather_object(obj=pre_gather, object_gather_list=metric_list, dst=0)
                if RANK == 0:
                    task.sample_metrics[metric] = list(itertools.chain.from_iterable(metric_list))

        dist.barrier()  # Ensure all processes are synced before proceeding

    if RANK == 0:
        results = {}
        samples = {}
        for task in eval_tasks:
            task.calculate_aggregate_metric(bootstrap_iters=bootstrap_iters)
            results[task.task_name] = dict(task.agg_metrics)
            samples[task.task_name] = task.logged_samples
        return {"results": results, "samples": samples if log_samples else None}
    return None
