"""Project hooks of the segmentation codebase (as mmseg.core.hook)."""
