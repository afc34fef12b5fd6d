"""Pieces of an open_clip-derived pretraining codebase (distributed setup, entry point)."""
