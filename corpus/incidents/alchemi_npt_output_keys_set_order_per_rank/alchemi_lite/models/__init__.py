from .base import BaseModelMixin, ModelConfig
from .mace import MACEWrapper

__all__ = ["BaseModelMixin", "MACEWrapper", "ModelConfig"]
