"""A trimmed copy of SuperBench's PyTorch model-benchmark stack (superbench/benchmarks/model_benchmarks)."""

from sb_lite.pytorch_bert import PytorchBERT

__all__ = ["PytorchBERT"]
