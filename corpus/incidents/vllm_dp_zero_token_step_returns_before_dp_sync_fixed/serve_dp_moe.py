"""Safe twin of vllm_dp_zero_token_step_returns_before_dp_sync: on a zero-token step
`GPUModelRunner.execute_model` runs the dummy forward whenever `data_parallel_size > 1`, whatever
the executor backend, so the rank still enters `coordinate_batch_across_dp` and the MoE layers'
EP collectives before returning the empty output (the change proposed for
vllm-project/vllm#43547 in #44601 and #51984/#53578).
"""
import argparse
import os
import queue

import torch
import torch.distributed as dist

from vllm_lite.config import ParallelConfig, SchedulerConfig, VllmConfig
from vllm_lite.distributed.parallel_state import initialize_model_parallel
from vllm_lite.model_executor.moe_model import MoEDecoder
from vllm_lite.v1.engine.core import DPEngineCoreProc, Scheduler
from vllm_lite.v1.worker.gpu_model_runner import GPUModelRunner


def load_prompts(path, dp_rank, dp_size):
    prompts = []
    with open(path) as f:
        for i, line in enumerate(f):
            if i % dp_size == dp_rank:
                prompts.append((f"req-{i}", [int(t) for t in line.split()]))
    return prompts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompts", required=True)
    parser.add_argument("--backend", choices=["mp", "ray", "external_launcher"], default="mp")
    parser.add_argument("--num-experts", type=int, default=64)
    parser.add_argument("--top-k", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--async-scheduling", action="store_true")
    args = parser.parse_args()

    dist.init_process_group("nccl")
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    dp_size, dp_rank = dist.get_world_size(), dist.get_rank()

    config = VllmConfig(
        model="moe-demo",
        parallel_config=ParallelConfig(data_parallel_size=dp_size, data_parallel_rank=dp_rank,
                                       enable_expert_parallel=True, distributed_executor_backend=args.backend),
        scheduler_config=SchedulerConfig(async_scheduling=args.async_scheduling),
    )
    initialize_model_parallel(config.parallel_config)
    model = MoEDecoder(args.vocab, args.hidden, args.layers, args.num_experts, args.top_k,
                       ep_size=dp_size, ep_rank=dp_rank).cuda().half()
    runner = GPUModelRunner(config, model, torch.device("cuda", local_rank))
    engine = DPEngineCoreProc(config, runner, Scheduler(config.scheduler_config))

    requests = queue.Queue()
    for req in load_prompts(args.prompts, dp_rank, dp_size):
        requests.put(req)
    engine.run_busy_loop(requests)


if __name__ == "__main__":
    main()
