from .model import DeepLabV3

__all__ = ["DeepLabV3"]
