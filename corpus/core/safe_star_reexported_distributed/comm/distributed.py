"""The project's own `distributed` module, as nanotron has: everything of torch.distributed by a
star import, a few functions wrapped with the project's defaults."""
import datetime

from torch import distributed as dist
from torch.distributed import *  # noqa: F401,F403

default_pg_timeout = datetime.timedelta(minutes=20)


def new_group(ranks=None, timeout=default_pg_timeout):
    return dist.new_group(ranks=ranks, timeout=timeout)
