from accelerate.accelerator import Accelerator

__all__ = ["Accelerator"]
