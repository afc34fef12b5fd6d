"""Export, run as `torchrun export/export.py`: `utils` is export/utils.py (the script's own
directory comes first on sys.path), whose sync_stats() only writes a file, so rank 0 calls it
alone safely. Resolving `utils` to evaluate/utils.py, which all-reduces, would flag it."""
import torch
import torch.distributed as dist

import utils


def main() -> None:
    dist.init_process_group("gloo")
    stats = torch.tensor([float(dist.get_world_size())])
    dist.barrier()
    if dist.get_rank() == 0:
        utils.sync_stats(stats)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
