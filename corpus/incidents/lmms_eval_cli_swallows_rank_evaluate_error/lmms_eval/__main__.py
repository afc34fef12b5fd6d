"""`lmms-eval` command line (trimmed): one or more evaluation configs run in turn on every rank of
an `accelerate launch` / `torchrun` job; each run ends in a rendezvous, and only rank 0 logs the
results.

Thread: https://github.com/EvolvingLMMs-Lab/lmms-eval/pull/1304 ("fix(eval): abort all ranks on per-rank exception instead of deadlocking")
Project: EvolvingLMMs-Lab/lmms-eval
What hung: "When `torchrun` / `accelerate` launches multiple ranks and one rank's `evaluate()`
raises, today's handler in `cli_evaluate` logs the error, appends `None`, and lets the rank return
normally. The other ranks keep going and block on the next collective (`gather_object`,
`barrier`, etc.) on NCCL until the launcher's wall-clock timeout tears the job down -- which on a
SLURM cluster can waste hours of GPU time for a failure that is visible in rank 0's log at second
zero." The error is one rank's own (the PR's test plan: "rank N raises"); the others are inside
`simple_evaluate`'s request-count gather, its post-generation barrier or the sample/metric
`gather_object`s (lmms_eval/evaluator.py), which the failing rank has left.
Fix (the PR, by the project's maintainer; open in the stored thread): "If `torch.distributed` is
initialized when the outer exception handler fires, destroy the process group and `sys.exit(1)` so
the launcher's elastic supervisor sees a non-zero rank and tears down the rest of the world
immediately."
Expected rankcheck finding: RC105 on the `except Exception as e:` of `cli_evaluate`, which swallows
a per-rank error raised out of the collectives of `cli_evaluate_single` -> `simple_evaluate`.
(Trimmed: config files, wandb/swanlab logging, response caches, task listing and most CLI options
are left out.)
"""
import argparse
import datetime
import os
import sys
import traceback

import torch
from accelerate import Accelerator
from accelerate.utils import InitProcessGroupKwargs
from loguru import logger as eval_logger

from lmms_eval import evaluator
from lmms_eval.tasks import TaskManager


def parse_eval_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--model", default="hf", help="Name of model e.g. `hf`")
    parser.add_argument("--tasks", default=None, help="Comma-separated task names")
    parser.add_argument("--model_args", default="", help="String arguments for model, e.g. `pretrained=...`")
    parser.add_argument("--batch_size", "-b", type=str, default=1)
    parser.add_argument("--device", type=str, default=None)
    parser.add_argument("--limit", type=float, default=None)
    parser.add_argument("--gen_kwargs", default=None)
    parser.add_argument("--log_samples", action="store_true", default=False)
    parser.add_argument("--output_path", default=None, type=str)
    parser.add_argument("--verbosity", type=str, default="INFO")
    parser.add_argument("--config", default="", help="Comma-separated list of model_args strings, one evaluation each")
    return parser.parse_args()


def cli_evaluate(args: argparse.Namespace = None) -> None:
    if not args:
        args = parse_eval_args()

    args_list = []
    results_list = []
    if args.config:
        for model_args in args.config.split(";"):
            args_copy = argparse.Namespace(**vars(args))
            args_copy.model_args = model_args
            args_list.append(args_copy)
    else:
        args_list.append(args)

    # initialize Accelerator only if not already in a distributed context
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        accelerator = None
        is_main_process = torch.distributed.get_rank() == 0
    else:
        kwargs_handler = InitProcessGroupKwargs(timeout=datetime.timedelta(seconds=60000))
        accelerator = Accelerator(kwargs_handlers=[kwargs_handler])
        if accelerator.is_main_process:
            is_main_process = True
        else:
            is_main_process = False

    for args in args_list:
        try:
            results, samples = cli_evaluate_single(args)
            results_list.append(results)

            if accelerator:
                accelerator.wait_for_everyone()
            elif torch.distributed.is_available() and torch.distributed.is_initialized():
                torch.distributed.barrier()
            if is_main_process and args.output_path:
                os.makedirs(args.output_path, exist_ok=True)
                with open(os.path.join(args.output_path, "results.txt"), "a", encoding="utf-8") as f:
                    f.write(f"{args.model} ({args.model_args}): {results}\n")

        except Exception as e:  # expect: RC105
            if args.verbosity == "DEBUG":
                raise e
            else:
                traceback.print_exc()
                eval_logger.error(f"Error during evaluation: {e}. Please set `--verbosity=DEBUG` to get more information.")
                results_list.append(None)

    for args, results in zip(args_list, results_list):
        # cli_evaluate will return none if the process is not the main process (rank 0)
        if results is not None:
            print(f"{args.model} ({args.model_args}), gen_kwargs: ({args.gen_kwargs}), limit: {args.limit}, batch_size: {args.batch_size}")
            print(results["results"])


def cli_evaluate_single(args: argparse.Namespace):
    if args.tasks is None:
        eval_logger.error("Need to specify task to evaluate.")
        sys.exit()
    task_manager = TaskManager(args.verbosity, model_name=args.model)
    task_list = args.tasks.split(",")
    task_names = task_manager.match_tasks(task_list)
    task_missing = [task for task in task_list if task not in task_names and "*" not in task]
    if task_missing:
        raise ValueError(f"Tasks not found: {', '.join(task_missing)}.")
    eval_logger.info(f"Selected Tasks: {task_names}")

    results = evaluator.simple_evaluate(
        model=args.model,
        model_args=args.model_args,
        tasks=task_names,
        batch_size=args.batch_size,
        device=args.device,
        limit=args.limit,
        log_samples=args.log_samples,
        gen_kwargs=args.gen_kwargs,
        task_manager=task_manager,
        cli_args=args,
        distributed_executor_backend="torchrun" if (torch.distributed.is_available() and torch.distributed.is_initialized()) else "accelerate",
    )

    if results is not None:
        samples = results.pop("samples") if args.log_samples else None
        return results, samples
    return None, None


if __name__ == "__main__":
    cli_evaluate()
