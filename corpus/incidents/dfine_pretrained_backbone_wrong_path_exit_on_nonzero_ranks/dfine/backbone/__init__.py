from .hgnetv2 import HGNetv2

__all__ = ["HGNetv2"]
