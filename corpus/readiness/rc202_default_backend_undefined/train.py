"""The default group is created without a backend (torch 2.x: "undefined", one backend per device
type): monitored_barrier, in a helper of another module, still needs plain gloo."""
from datetime import timedelta

import torch.distributed as dist

from helpers import wait_for_everyone


def main():
    dist.init_process_group(timeout=timedelta(minutes=5))
    wait_for_everyone()


if __name__ == "__main__":
    main()
