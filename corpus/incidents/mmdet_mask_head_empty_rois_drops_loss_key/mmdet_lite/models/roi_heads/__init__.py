from .bbox_head import BBoxHead
from .mask_head import FCNMaskHead
from .standard_roi_head import StandardRoIHead

__all__ = ["BBoxHead", "FCNMaskHead", "StandardRoIHead"]
