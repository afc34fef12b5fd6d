"""A trimmed copy of trl 0.4.1's PPO trainer (huggingface/trl, trl/trainer/ppo_trainer.py and
ppo_config.py, March 2023): the accelerate setup and the optimisation step with its PPO epochs over
shuffled mini-batches and the KL early stopping, as fixed in trl#254 (the policy KL averaged over
the processes before the test)."""
from trl_lite.ppo_config import PPOConfig
from trl_lite.ppo_trainer import PPOTrainer

__all__ = ["PPOConfig", "PPOTrainer"]
