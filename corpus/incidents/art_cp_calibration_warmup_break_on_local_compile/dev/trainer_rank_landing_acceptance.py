"""Calibration harness for the TrainerRank layout cost model (`--phase cost-calibrate`): for one
group of histories it times each candidate prefix-tree layout at CP4 -- a few warm-up forwards
until torch.compile has settled, then `--repeat` measured forwards -- and writes the timings as
evidence for the fitted cost table (torchrun --standalone --nproc-per-node=4).

Thread: https://github.com/OpenPipe/ART/issues/840 ("TrainerRank CP4: deterministic NCCL all-to-all
hang in the context-parallel group on two real Ellavox groups"), fixed by
https://github.com/OpenPipe/ART/pull/843 ("Fix the CP4 calibration hang: decide warm-ups from
world-wide compile telemetry (#840)", merged)
Project: OpenPipe/ART (dev/trainer_rank_landing_acceptance.py)
What hung: two groups hung at CP4 with an NCCL watchdog timeout on ALLTOALL_BASE in the
context-parallel group, the ranks stopped at different collective sequence numbers. The PR's root
cause: "the warm-up loop stopped a candidate's warm-ups when the **local** rank's forward was
compile-free. Compile telemetry is per process, and one CP rank (rank 3, whose local shard shapes
differ) recompiled on its second `depth_one` warm-up while ranks 0-2 did not. Ranks 0-2 moved on
to the next candidate; rank 3 ran a third `depth_one`. The context-parallel all-to-alls then paired
two different layouts and deadlocked." -- "a harness desynchronization, not a context-parallel
runtime bug".
Fix (the PR): the decision to stop warming up is taken from world-wide compile telemetry: each
rank's "compiled during this warm-up" flag is all-reduced (MAX) over the world, and every rank
stops only when no rank compiled.
Expected rankcheck finding: RC103 on the `break` out of the warm-up loop, taken when this rank's
own forward did not compile, while the loop body's forward issues the CP all-to-alls.
Inferred: the layout objects, model loading and evidence format are reduced for this
reconstruction.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist

from art_lite.compile_telemetry import CompileWatch
from art_lite.layouts import candidate_layouts, load_group
from art_lite.megatron.model import load_model
from art_lite.megatron.trainer_rank import TrainerRank

MAX_WARMUPS = 4


def calibrate_group(trainer, group, repeat, evidence_path):
    records = []
    for layout in candidate_layouts(group):
        # warm up until this layout's forward no longer compiles
        for warmup in range(MAX_WARMUPS):
            with CompileWatch() as watch:
                trainer.dp_rank_forward(layout)
            if not watch.compiled:
                break  # expect: RC103
        torch.cuda.synchronize()
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            trainer.dp_rank_forward(layout)
            torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        records.append({"layout": layout.name, "warmups": warmup + 1, "seconds": times})
    if dist.get_rank() == 0:
        with open(evidence_path, "a") as f:
            for r in records:
                f.write(json.dumps({"group": group.name, **r}) + "\n")
    return records


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--phase", choices=["cost-calibrate"], required=True)
    parser.add_argument("--cell", required=True)
    parser.add_argument("--group", type=int, required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--repeat", type=int, default=8)
    parser.add_argument("--evidence", required=True)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    cp_size = int(os.environ.get("ART_MEGATRON_CONTEXT_PARALLEL_SIZE", "1"))
    # one data-parallel replica: the whole world is the context-parallel group
    assert cp_size == dist.get_world_size()
    cp_group = dist.new_group(list(range(cp_size)))

    model = load_model(args.model)
    trainer = TrainerRank(model, cp_group)
    group = load_group(args.cell, args.group)
    calibrate_group(trainer, group, args.repeat, args.evidence)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
