from .fully_sharded_data_parallel import fsdp_enable_wrap, fsdp_wrap

__all__ = ["fsdp_enable_wrap", "fsdp_wrap"]
