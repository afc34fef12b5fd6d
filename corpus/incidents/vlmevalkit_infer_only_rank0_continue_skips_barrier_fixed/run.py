"""Safe twin of vlmevalkit_infer_only_rank0_continue_skips_barrier: the per-dataset barrier is issued
at the top of the dataset loop (PR #772), before rank 0's infer-only `continue`.

Thread: https://github.com/open-compass/VLMEvalKit/issues/726
"""
import argparse
import datetime
import os

import torch
import torch.distributed as dist

from vlmeval.inference import infer_data_job
from vlmeval.smp import get_logger, get_rank_and_world_size


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=str, nargs="+", required=True)
    parser.add_argument("--model", type=str, nargs="+", required=True)
    parser.add_argument("--work-dir", type=str, default="./outputs")
    parser.add_argument("--mode", type=str, default="all", choices=["all", "infer"])
    parser.add_argument("--judge", type=str, default=None)
    parser.add_argument("--verbose", action="store_true")
    return parser.parse_args()


def main(build_model, build_dataset):
    logger = get_logger("RUN")
    args = parse_args()
    rank, world_size = get_rank_and_world_size()
    if world_size > 1:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
        dist.init_process_group(backend="nccl", timeout=datetime.timedelta(seconds=10800))

    for model_name in args.model:
        model = build_model(model_name)
        pred_root = os.path.join(args.work_dir, model_name)
        os.makedirs(pred_root, exist_ok=True)
        for dataset_name in args.data:
            if world_size > 1:
                dist.barrier()
            dataset = build_dataset(dataset_name)
            if dataset is None:
                logger.error(f"Dataset {dataset_name} is not valid, will be skipped.")
                continue
            result_file = os.path.join(pred_root, f"{model_name}_{dataset_name}.pkl")
            model = infer_data_job(model, work_dir=pred_root, model_name=model_name, dataset=dataset, verbose=args.verbose)

            if rank == 0:
                if args.mode == "infer":
                    continue
                judge_kwargs = {"model": args.judge, "nproc": 4, "verbose": args.verbose}
                eval_results = dataset.evaluate(result_file, **judge_kwargs)
                logger.info(f"The evaluation of model {model_name} x dataset {dataset_name} has finished!")
                logger.info(eval_results)

    if world_size > 1:
        dist.destroy_process_group()
