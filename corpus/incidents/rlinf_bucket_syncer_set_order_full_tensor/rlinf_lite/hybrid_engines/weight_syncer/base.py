"""Trimmed rlinf/hybrid_engines/weight_syncer/base.py."""
from abc import ABC, abstractmethod

from omegaconf import OmegaConf


class WeightSyncer(ABC):
    def __init__(self):
        self._sender_initialized = False
        self._receiver_initialized = False

    def sender_initialized(self) -> bool:
        return self._sender_initialized

    def receiver_initialized(self) -> bool:
        return self._receiver_initialized

    @abstractmethod
    async def sync(self, state_dict, send, version): ...

    @abstractmethod
    async def apply(self, model, recv): ...

    @classmethod
    def create(cls, config) -> "WeightSyncer":
        kind = OmegaConf.select(config, "type")
        if kind == "bucket":
            from .bucket_syncer import BucketWeightSyncer

            bucket = OmegaConf.select(config, "bucket")
            return BucketWeightSyncer(
                bucket_size=OmegaConf.select(bucket, "bucket_size"),
                bucket_dtype=OmegaConf.select(bucket, "bucket_dtype"),
                bucket_device=OmegaConf.select(bucket, "bucket_device", default="cuda"),
            )
        raise ValueError(f"unknown weight syncer type {kind}")
