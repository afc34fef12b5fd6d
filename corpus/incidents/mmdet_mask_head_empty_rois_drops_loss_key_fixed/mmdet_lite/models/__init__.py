from .detectors import MaskRCNN


def build_detector(cfg: dict):
    cfg = dict(cfg)
    det_type = cfg.pop("type")
    if det_type != "MaskRCNN":
        raise KeyError(f"unknown detector {det_type}")
    return MaskRCNN(**cfg)


__all__ = ["MaskRCNN", "build_detector"]
