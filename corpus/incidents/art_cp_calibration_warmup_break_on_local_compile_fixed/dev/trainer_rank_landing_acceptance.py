"""Safe twin of art_cp_calibration_warmup_break_on_local_compile: the warm-up loop stops only when
no rank compiled during the warm-up, the per-rank flags being all-reduced (MAX) over the world
(OpenPipe/ART#843, merged, closing #840), so every CP rank runs the same forwards in the same
order and the context-parallel all-to-alls always pair the same layout.
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
        # warm up until no rank's forward compiles any more: compile telemetry is per process,
        # so the decision is reduced over the world and every rank stops at the same warm-up
        for warmup in range(MAX_WARMUPS):
            with CompileWatch() as watch:
                trainer.dp_rank_forward(layout)
            any_compiled = torch.tensor([int(watch.compiled)], device="cuda")
            dist.all_reduce(any_compiled, op=dist.ReduceOp.MAX)
            if any_compiled.item() == 0:
                break
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
