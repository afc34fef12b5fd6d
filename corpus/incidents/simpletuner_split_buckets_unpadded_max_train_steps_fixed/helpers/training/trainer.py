"""LoRA fine-tuning loop for an SDXL-style UNet (trimmed SimpleTuner Trainer)."""
import logging
import math
import os

import torch
import torch.nn.functional as F
from tqdm import tqdm

from helpers.data_backend.factory import configure_multi_databackend, random_dataloader_iterator
from helpers.training.state_tracker import StateTracker

logger = logging.getLogger("Trainer")


class Trainer:
    def __init__(self, config, accelerator, model, noise_scheduler):
        self.config = config
        self.accelerator = accelerator
        self.model = model
        self.noise_scheduler = noise_scheduler
        self.optimizer = None
        self.lr_scheduler = None
        self.train_loss = 0.0
        self.state = {"global_step": 0, "first_epoch": 1, "current_epoch": 1}

    def init_data_backend(self):
        configure_multi_databackend(self.config, self.accelerator)
        self._recalculate_training_steps()

    def _recalculate_training_steps(self):
        # every backend's length is this process's number of batches after the split
        self.config.total_num_batches = sum(
            len(backend["metadata_backend"]) for _, backend in StateTracker.get_data_backends().items()
        )
        self.config.num_update_steps_per_epoch = math.ceil(
            self.config.total_num_batches / self.config.gradient_accumulation_steps
        )
        if self.config.max_train_steps is None or self.config.max_train_steps == 0:
            if not self.config.num_train_epochs:
                raise ValueError("You must specify either --max_train_steps or --num_train_epochs with a value > 0")
            self.config.max_train_steps = self.config.num_train_epochs * self.config.num_update_steps_per_epoch
            logger.info(
                f"Calculated our maximum training steps at {self.config.max_train_steps} because we have"
                f" {self.config.num_train_epochs} epochs and {self.config.num_update_steps_per_epoch} steps per epoch."
            )
        else:
            self.config.num_train_epochs = math.ceil(
                self.config.max_train_steps / max(self.config.num_update_steps_per_epoch, 1)
            )

    def init_optimizer(self):
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(params, lr=self.config.learning_rate, weight_decay=1e-2)
        self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda step: min(1.0, (step + 1) / max(self.config.lr_warmup_steps, 1))
        )
        self.model, self.optimizer, self.lr_scheduler = self.accelerator.prepare(
            self.model, self.optimizer, self.lr_scheduler
        )

    def _epoch_rollover(self, epoch):
        StateTracker.set_epoch(epoch)
        StateTracker.clear_exhausted_buckets()
        for backend in StateTracker.get_data_backends().values():
            backend["sampler"].set_epoch(epoch)
            backend["metadata_backend"].reset_seen_images()
        self.state["current_epoch"] = epoch

    def model_predict_and_loss(self, batch):
        latents = batch["latent_batch"].to(self.accelerator.device)
        noise = torch.randn_like(latents)
        timesteps = torch.randint(
            0, self.noise_scheduler.config.num_train_timesteps, (latents.shape[0],), device=latents.device
        )
        noisy_latents = self.noise_scheduler.add_noise(latents, noise, timesteps)
        model_pred = self.model(noisy_latents, timesteps, batch["prompt_embeds"].to(latents.device)).sample
        return F.mse_loss(model_pred.float(), noise.float(), reduction="mean")

    def train(self):
        progress_bar = tqdm(
            range(0, self.config.max_train_steps),
            disable=not self.accelerator.is_local_main_process,
            initial=self.state["global_step"],
        )
        self.accelerator.wait_for_everyone()
        step = self.state["global_step"]
        for epoch in range(self.state["first_epoch"], self.config.num_train_epochs + 2):
            self._epoch_rollover(epoch)
            self.model.train()
            train_backends = {
                backend_id: iter(backend["train_dataloader"])
                for backend_id, backend in StateTracker.get_data_backends().items()
                if not StateTracker.backend_status(backend_id)
            }
            while True:
                step += 1
                batch = random_dataloader_iterator(step, train_backends)
                if batch is False:
                    logger.debug(f"Reached the end of epoch {epoch}")
                    break
                with self.accelerator.accumulate(self.model):
                    loss = self.model_predict_and_loss(batch)
                    # Gather the losses across all processes for logging
                    avg_loss = self.accelerator.gather(loss.repeat(self.config.train_batch_size)).mean()
                    self.train_loss += avg_loss.item() / self.config.gradient_accumulation_steps
                    self.accelerator.backward(loss)
                    if self.accelerator.sync_gradients:
                        self.accelerator.clip_grad_norm_(self.model.parameters(), self.config.max_grad_norm)
                    self.optimizer.step()
                    self.lr_scheduler.step()
                    self.optimizer.zero_grad(set_to_none=True)
                if self.accelerator.sync_gradients:
                    self.state["global_step"] += 1
                    progress_bar.update(1)
                    progress_bar.set_postfix(loss=self.train_loss, epoch=epoch)
                    self.train_loss = 0.0
                    if self.state["global_step"] % self.config.checkpointing_steps == 0:
                        self.accelerator.save_state(
                            os.path.join(self.config.output_dir, f"checkpoint-{self.state['global_step']}")
                        )
                self.accelerator.wait_for_everyone()
                if self.state["global_step"] >= self.config.max_train_steps or epoch > self.config.num_train_epochs:
                    logger.info(
                        f"Training has completed. global_step = {self.state['global_step']},"
                        f" max_train_steps = {self.config.max_train_steps}"
                    )
                    break
            if self.state["global_step"] >= self.config.max_train_steps or epoch > self.config.num_train_epochs:
                logger.info(f"Exiting training loop at epoch {epoch}, step {self.state['global_step']}")
                break

        self.accelerator.wait_for_everyone()
        if self.accelerator.is_main_process:
            unwrapped = self.accelerator.unwrap_model(self.model)
            torch.save(
                {k: v for k, v in unwrapped.state_dict().items() if "lora" in k},
                os.path.join(self.config.output_dir, "pytorch_lora_weights.pt"),
            )
        self.accelerator.end_training()
