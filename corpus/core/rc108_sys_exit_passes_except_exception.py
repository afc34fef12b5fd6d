"""Rank 0 exits when the run is already finished. The `except Exception:` around it does not catch
SystemExit, so rank 0 ends and the launcher tears the job down (a crash, not a hang; RC108, off
by default). The look-alike with a bare `except:` keeps rank 0 alive: rc102_sys_exit_swallowed_by_a_bare_except."""
import os
import sys

import torch.distributed as dist


def main(out: str) -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    try:
        if rank == 0 and os.path.exists(os.path.join(out, "final.pt")):
            sys.exit(1)  # expect: RC108
    except Exception as exc:
        print(f"check failed: {exc}")
    dist.barrier()
