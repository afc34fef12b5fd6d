"""Process-group helpers (init, barriers, first-rank-per-node context)."""
