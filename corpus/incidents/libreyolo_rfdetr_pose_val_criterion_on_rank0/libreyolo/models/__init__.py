"""Model families of LibreYOLO (trimmed to RF-DETR)."""
