"""Trimmed-down copy of the bits of NeMo Automodel the SFT recipe uses."""
