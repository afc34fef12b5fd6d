"""One training job for the run-time guard's tests, run under `rankcheck run -- torchrun`.

RUNTIME_SCENARIO picks how it goes wrong (the line each scenario must be named by carries a
`# rt: NAME` marker):
  extra       rank 0 enters an extra all_reduce; the others go on to the barrier
  loader      rank 1 sleeps in its data loader before the barrier
  kill        rank 1 is killed with SIGKILL mid-run
  host        every rank completes the same all_reduce, then waits on a file nobody writes
  straggler   rank 1 computes 10x longer per step (no hang)
  ddp         as loader, but the gradients go through DDP (its collectives bypass the wrappers)
  fine        nothing goes wrong
With RUNTIME_ARM_DIR set, the script arms itself (`rankcheck.runtime.arm`) instead.
Every rank writes the time the trouble started (HANG_AT file) so the test can time the verdict.
"""

import datetime
import os
import signal
import sys
import time

import torch
import torch.distributed as dist

SCENARIO = os.environ["RUNTIME_SCENARIO"]
OUT = os.environ["RUNTIME_OUT"]
STEPS = int(os.environ.get("RUNTIME_STEPS", "40"))
TROUBLE_AT = 25  # after a second of steps: the heartbeat has published a few times
STEP_S = 0.05


def mark_trouble() -> None:
    with open(os.path.join(OUT, f"trouble_{dist.get_rank()}"), "w") as handle:
        handle.write(repr(time.time()))


def load_batch(rank, step):
    if SCENARIO in ("loader", "ddp") and rank == 1 and step == TROUBLE_AT:
        mark_trouble()
        time.sleep(600)  # rt: loader
    return torch.ones(4) * step


def wait_for_the_host():
    mark_trouble()
    while not os.path.exists(os.path.join(OUT, "never-written")):
        time.sleep(0.05)  # rt: host


def main():
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=600))
    if os.environ.get("RUNTIME_ARM_DIR"):  # armed by the script's own line, under plain torchrun
        import rankcheck.runtime

        rankcheck.runtime.arm(os.environ["RUNTIME_ARM_DIR"], floor_s=2.0, interval_s=0.25)
    rank = dist.get_rank()
    if SCENARIO == "straggler":
        mark_trouble()  # slow from the first step
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    if SCENARIO == "ddp":
        model = torch.nn.parallel.DistributedDataParallel(model)
    for step in range(STEPS):
        batch = load_batch(rank, step)
        loss = model(batch).sum()
        loss.backward()
        if SCENARIO != "ddp":
            for parameter in model.parameters():
                dist.all_reduce(parameter.grad)  # rt: allreduce
        optimizer.step()
        optimizer.zero_grad()
        time.sleep(STEP_S * (10 if SCENARIO == "straggler" and rank == 1 else 1))
        if step == STEPS - 1 and SCENARIO == "extra" and rank == 0:
            mark_trouble()
            dist.all_reduce(torch.ones(2))  # rt: extra
        if step == TROUBLE_AT:
            if SCENARIO == "kill" and rank == 1:
                mark_trouble()
                os.kill(os.getpid(), signal.SIGKILL)  # rt: kill
            if SCENARIO == "host":
                dist.all_reduce(torch.ones(1))  # rt: host-last
                wait_for_the_host()
    dist.barrier()  # rt: barrier
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
