"""Pieces of an mmcv-1.x style runner: rank helpers, a log buffer, an iteration runner and the
logger hooks (text and Weights & Biases) that mmsegmentation registers through `log_config`."""
