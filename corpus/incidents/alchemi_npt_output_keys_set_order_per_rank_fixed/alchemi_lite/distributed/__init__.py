from .consolidation import consolidate_padded_outputs
from .domain_parallel import DomainConfig, DomainParallel, MLIPSpec
from .halo import ParticleHaloConfig, ParticleHaloMetadata, distributed_all_reduce, halo_reverse_exchange

__all__ = [
    "DomainConfig",
    "DomainParallel",
    "MLIPSpec",
    "ParticleHaloConfig",
    "ParticleHaloMetadata",
    "consolidate_padded_outputs",
    "distributed_all_reduce",
    "halo_reverse_exchange",
]
