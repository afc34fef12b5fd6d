"""Helpers of the vision training script (as sparseml.pytorch.utils.helpers)."""
