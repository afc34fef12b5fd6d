"""Safe twin of lmms_eval_cli_swallows_rank_evaluate_error/lmms_eval/__main__.py: the change of
lmms-eval#1304. When the outer handler catches a rank's evaluation error while a process group is
initialized, it destroys the process group and exits with status 1, so the launcher's elastic
supervisor tears the other ranks down instead of leaving them in the next collective.

Thread: https://github.com/EvolvingLMMs-Lab/lmms-eval/pull/1304
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

        except Exception as e:
            if args.verbosity == "DEBUG":
                raise e
            else:
                traceback.print_exc()
                eval_logger.error(f"Error during evaluation: {e}. Please set `--verbosity=DEBUG` to get more information.")
                results_list.append(None)
                if torch.distributed.is_available() and torch.distributed.is_initialized():
                    try:
                        torch.distributed.destroy_process_group()
                    except Exception:
                        pass
                    sys.exit(1)

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
