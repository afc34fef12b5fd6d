from espnet3_lite.data.chunk_iter_factory import ChunkIterFactory
from espnet3_lite.data.dataloader import DataLoaderBuilder

__all__ = ["ChunkIterFactory", "DataLoaderBuilder"]
