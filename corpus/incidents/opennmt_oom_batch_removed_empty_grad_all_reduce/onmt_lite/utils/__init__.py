from onmt_lite.utils.distributed import all_gather_list, all_reduce_and_rescale_tensors, multi_init
from onmt_lite.utils.statistics import Statistics

__all__ = ["all_gather_list", "all_reduce_and_rescale_tensors", "multi_init", "Statistics"]
