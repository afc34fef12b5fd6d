from dataclasses import dataclass
from typing import Optional


@dataclass
class PPOConfig:
    """Configuration class for PPOTrainer (trl/trainer/ppo_config.py), the fields `step` reads."""

    model_name: Optional[str] = None
    steps: int = 20000
    learning_rate: float = 1e-5
    adap_kl_ctrl: bool = True
    init_kl_coef: float = 0.2
    target: float = 6
    horizon: float = 10000
    gamma: float = 1
    lam: float = 0.95
    cliprange: float = 0.2
    cliprange_value: float = 0.2
    vf_coef: float = 0.1
    batch_size: int = 256
    forward_batch_size: int = 16
    mini_batch_size: int = 1
    gradient_accumulation_steps: int = 1
    ppo_epochs: int = 4
    max_grad_norm: Optional[float] = None
    log_with: Optional[str] = None
    seed: int = 0
    early_stopping: bool = False
    target_kl: float = 0.1
