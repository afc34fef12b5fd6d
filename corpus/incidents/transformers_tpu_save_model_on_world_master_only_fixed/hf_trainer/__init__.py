from .modeling_utils import PretrainedConfig, PreTrainedModel
from .trainer import Trainer
from .training_args import TrainingArguments, is_tpu_available

__all__ = ["PretrainedConfig", "PreTrainedModel", "Trainer", "TrainingArguments", "is_tpu_available"]
