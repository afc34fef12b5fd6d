from apex_lite.parallel.distributed import DistributedDataParallel, flat_dist_call

__all__ = ["DistributedDataParallel", "flat_dist_call"]
