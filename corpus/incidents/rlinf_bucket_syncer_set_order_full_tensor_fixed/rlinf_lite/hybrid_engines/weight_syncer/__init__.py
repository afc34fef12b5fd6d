from .base import WeightSyncer
from .bucket_syncer import BucketWeightSyncer

__all__ = ["WeightSyncer", "BucketWeightSyncer"]
