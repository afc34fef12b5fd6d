"""Trimmed vllm/config: the parallel settings the model runner branches on."""
from dataclasses import dataclass, field
from typing import Optional


@dataclass
class ParallelConfig:
    tensor_parallel_size: int = 1
    data_parallel_size: int = 1
    data_parallel_rank: int = 0
    enable_expert_parallel: bool = False
    # "mp", "ray", "uni" or "external_launcher" (torchrun-style SPMD)
    distributed_executor_backend: Optional[str] = "mp"


@dataclass
class SchedulerConfig:
    max_num_batched_tokens: int = 8192
    max_num_seqs: int = 256
    async_scheduling: bool = False


@dataclass
class VllmConfig:
    model: str = ""
    parallel_config: ParallelConfig = field(default_factory=ParallelConfig)
    scheduler_config: SchedulerConfig = field(default_factory=SchedulerConfig)
    kv_transfer_config: Optional[dict] = None
