"""Lightweight PyTorch training framework (reconstruction of the parts of microsoft/PyMarlin that the
incident goes through; see examples/ptb_dep/train.py)."""
