from .bbox import assign_and_sample, bbox2delta, bbox2roi, delta2bbox

__all__ = ["assign_and_sample", "bbox2delta", "bbox2roi", "delta2bbox"]
