from .npt import BerendsenNPT, SystemState

__all__ = ["BerendsenNPT", "SystemState"]
