"""MMLU gate for post-training quantization of Megatron-Core models."""
