"""Entry point: PPO with a ZeRO-3 reward model as the reward function."""
from accelerate import Accelerator

from reward import ParallelRewardModel
from trainer import AccelerateRLTrainer


def main(model, tokenizer, prompt_loader, config, ds_config):
    accelerator = Accelerator()
    model = accelerator.prepare(model)
    reward_fn = ParallelRewardModel(config.reward_model_path, ds_config)
    trainer = AccelerateRLTrainer(accelerator, model, tokenizer, reward_fn, config)
    for batch in prompt_loader:
        samples, scores = trainer.make_experience(batch)
