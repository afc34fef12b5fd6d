"""FCOS components of a custom mmdetection-based detector (head, detector, dist helpers)."""
