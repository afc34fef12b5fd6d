from espnet3_lite.data.chunk_iter_factory import ChunkIterFactory
from espnet3_lite.data.dataloader import DataLoaderBuilder
from espnet3_lite.data.iterator import BaseIterator

__all__ = ["BaseIterator", "ChunkIterFactory", "DataLoaderBuilder"]
