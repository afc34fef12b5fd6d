from areno_lite.engine.optim.adamw_fp32_master import AdamWFP32Master, OptimizerOffloadConfig

__all__ = ["AdamWFP32Master", "OptimizerOffloadConfig"]
