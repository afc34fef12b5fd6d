"""Training package of LibreYOLO (trimmed)."""
