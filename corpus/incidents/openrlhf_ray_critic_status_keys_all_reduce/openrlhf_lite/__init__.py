"""A trimmed OpenRLHF-style PPO stack on Ray + DeepSpeed."""
