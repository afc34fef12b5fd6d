"""Rank 0 exits when the run is already finished, inside a bare `except:` that swallows SystemExit
too: rank 0 goes on alone, past the barrier the others wait in... and into the next one."""
import os
import sys

import torch.distributed as dist


def main(out: str) -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    try:
        if rank == 0 and os.path.exists(os.path.join(out, "final.pt")):
            sys.exit(1)  # expect: RC102
        dist.barrier()
    except:  # expect: RC105
        print("could not check for a finished run")
    dist.barrier()
