"""Data-parallel serving of an MoE model with expert parallelism, one vLLM-style engine core per
DP rank (started here with torchrun for the process group; the executor backend is "mp" or "ray",
as with `vllm serve --data-parallel-size N --enable-expert-parallel`), each feeding its own
GPUModelRunner from a request queue.

Thread: https://github.com/vllm-project/vllm/issues/43547 ("[Bug]: MoE+DP — zero-token-scheduled
step skips coordinate_batch_across_dp for ray/mp DP backends → ~T+1h NCCL reduce_scatter
deadlock", open; fix proposed in vllm-project/vllm#44601 "Fix empty DP model step coordination",
open, and again in #51984 (closed) / #53578 (open); the external-launcher-only guard it widens came
from vllm-project/vllm#28774, merged)
Project: vllm-project/vllm (vllm/v1/worker/gpu_model_runner.py, `execute_model`)
What hung: "When `num_scheduled_tokens == 0` the `_dummy_run(1)` that fires
`coordinate_batch_across_dp` is gated on `distributed_executor_backend == "external_launcher"`.
Under `ray` (and `mp`) DP a zero-token-scheduled rank silently returns `EMPTY_MODEL_RUNNER_OUTPUT`
without participating in the per-step DP collective; the partner DP rank advances by one; drift
accumulates ~one collective per asymmetric step; after ~1h a real MoE `reduce_scatter` hangs."
The early return is taken on the rank whose scheduler produced a step with no tokens (its requests
wait on KV blocks or on the previous async step), while the other DP ranks enter the DP
all-reduce of `coordinate_batch_across_dp` and the EP all-gather/reduce-scatter of every MoE layer.
Fix (as proposed in #44601 and #51984/#53578): run the dummy forward on every zero-token step
whenever `data_parallel_size > 1`, whatever the executor backend, before returning the empty
output.
Expected rankcheck finding: RC102 on the `return output` of the zero-token branch of
`GPUModelRunner.execute_model` (vllm_lite/v1/worker/gpu_model_runner.py), an exit taken on this
rank's scheduling outcome before `coordinate_batch_across_dp` and the MoE forward that the other
DP ranks reach.
Inferred: the scheduler, the engine loop (reduced to the async-scheduling path, where a dispatched
zero-token step counts as executed and is not followed by a dummy batch), the MoE model and the
EP communication (the allgather/reduce-scatter all2all backend) are written for this
reconstruction; the fix is not merged upstream at the time of writing.
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
