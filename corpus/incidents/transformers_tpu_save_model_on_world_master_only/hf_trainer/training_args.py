"""TrainingArguments and the TPU probe of transformers 2.9 (trimmed)."""
from dataclasses import dataclass

try:
    import torch_xla.core.xla_model as xm  # noqa: F401

    _torch_tpu_available = True
except ImportError:
    _torch_tpu_available = False


def is_tpu_available():
    return _torch_tpu_available


@dataclass
class TrainingArguments:
    output_dir: str
    per_device_train_batch_size: int = 8
    learning_rate: float = 5e-5
    adam_epsilon: float = 1e-8
    max_grad_norm: float = 1.0
    num_train_epochs: float = 3.0
    warmup_steps: int = 0
    logging_steps: int = 500
    save_steps: int = 500
    save_total_limit: int = None
    local_rank: int = -1
    seed: int = 42
