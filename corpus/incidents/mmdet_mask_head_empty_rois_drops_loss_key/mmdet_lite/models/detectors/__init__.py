from .base import BaseDetector
from .two_stage import MaskRCNN

__all__ = ["BaseDetector", "MaskRCNN"]
