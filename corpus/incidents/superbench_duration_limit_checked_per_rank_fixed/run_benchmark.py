"""SuperBench `pytorch-bert-large` model benchmark under DDP with a time budget (`--duration`), launched as
`torchrun --nproc_per_node 8 run_benchmark.py --duration 120 --distributed_impl ddp --distributed_backend nccl`.

Thread: https://github.com/microsoft/superbenchmark/pull/347 ("Bug - Fix bug of duration feature for model
benchmarks in distributed mode.", merged)
Project: microsoft/superbenchmark (superbench/benchmarks/model_benchmarks/model_base.py, pytorch_base.py,
pytorch_bert.py and the other PyTorch model benchmarks)
What hung: with `duration > 0`, `ModelBenchmark._is_finished(curr_step, curr_time)` compares each rank's own
`time.time()` against its own `_sub_benchmark_start_time`. The ranks reach the time budget at different steps,
"some rank may enter one more step and can never finish" (PR description): the rank whose clock ran out returns
from `_train_step` and goes on to `_sync_result`'s all_reduce of its step times, while its peers run one more
training step and wait in the DDP gradient all-reduce of `loss.backward()` for it.
Fix (the PR, merged as b5b1c3d): `PytorchBase._is_finished` overrides the base check and, when `duration > 0`,
all-reduces the finished flag with MAX every `check_frequency` (100) steps, so every rank stops on the same step;
step times are taken with `torch.cuda.synchronize()` (`_timer`).
Safe twin: `PytorchBase._is_finished` (sb_lite/pytorch_base.py) all-reduces the finished flag (MAX) every
`check_frequency` steps when a duration is set, so the loop's exit is agreed by every rank. Expected: no finding.
Inferred: the Benchmark/registry plumbing, result summarization, Horovod paths, inference and the other models
(CNN, GPT-2, LSTM, which have the same loop) are left out; the entry script stands in for `sb run`. The step-time
all_reduce in `_sync_result` is the project's own; its length follows the step count, which the fix makes equal.
"""
import argparse
import logging
import sys

from sb_lite import PytorchBERT


def parse_args():
    parser = argparse.ArgumentParser(description="Run the pytorch-bert-large model benchmark.")
    parser.add_argument("--duration", type=int, default=120, help="Time budget of each sub-benchmark in seconds.")
    parser.add_argument("--num_warmup", type=int, default=16)
    parser.add_argument("--num_steps", type=int, default=1_000_000, help="Upper bound; the duration ends the run.")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--precision", default="float16")
    parser.add_argument("--distributed_impl", default="ddp")
    parser.add_argument("--distributed_backend", default="nccl")
    return parser.parse_args()


def main():
    logging.basicConfig(level=logging.INFO)
    args = parse_args()
    parameters = (
        "--hidden_size=1024 --num_hidden_layers=24 --num_attention_heads=16 --intermediate_size=4096 "
        f"--duration {args.duration} --num_warmup {args.num_warmup} --num_steps {args.num_steps} "
        f"--batch_size {args.batch_size} --precision {args.precision} --model_action train "
        f"--distributed_impl {args.distributed_impl} --distributed_backend {args.distributed_backend}"
    )
    benchmark = PytorchBERT("pytorch-bert-large", parameters=parameters)
    ok = benchmark.run()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
