from distributed_shampoo_lite.distributed_shampoo import DistributedShampoo
from distributed_shampoo_lite.shampoo_types import DDPShampooConfig

__all__ = ["DistributedShampoo", "DDPShampooConfig"]
