"""RF-DETR family of LibreYOLO (trimmed)."""
