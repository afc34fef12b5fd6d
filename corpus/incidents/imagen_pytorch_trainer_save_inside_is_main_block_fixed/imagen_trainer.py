"""Trimmed copy of the project's ImagenTrainer wrapper (vendored from imagen-pytorch's trainer.py,
keeping only what train_imagen.py uses). The trainer owns an Accelerator; its `save` starts with
`accelerator.wait_for_everyone()` and then lets only the checkpointing process write the file.
"""
import os
from contextlib import contextmanager, nullcontext

import torch
from accelerate import Accelerator, DistributedDataParallelKwargs
from ema_pytorch import EMA
from imagen_pytorch import Imagen


class ImagenTrainer(torch.nn.Module):
    def __init__(self, imagen: Imagen, lr=1e-4, eps=1e-8, max_grad_norm=None, use_ema=True, **accelerate_kwargs):
        super().__init__()
        ddp_kwargs = DistributedDataParallelKwargs(find_unused_parameters=True)
        self.accelerator = Accelerator(kwargs_handlers=[ddp_kwargs], **accelerate_kwargs)
        self.imagen = imagen
        self.use_ema = use_ema
        self.max_grad_norm = max_grad_norm
        self.ema_unets = torch.nn.ModuleList([EMA(unet) for unet in imagen.unets]) if use_ema else None
        self.optim0 = torch.optim.Adam(imagen.unets[0].parameters(), lr=lr, eps=eps)
        self.unet_being_trained, self.optim0 = self.accelerator.prepare(imagen.unets[0], self.optim0)
        self.register_buffer("steps", torch.zeros(len(imagen.unets), dtype=torch.long))
        # only the process that owns the filesystem writes checkpoints
        self.can_checkpoint = self.is_local_main

    @property
    def is_main(self):
        return self.accelerator.is_main_process

    @property
    def is_local_main(self):
        return self.accelerator.is_local_main_process

    @property
    def device(self):
        return self.accelerator.device

    def print(self, msg):
        if self.is_main:
            self.accelerator.print(msg)

    def train_step(self, unet_number=1, max_batch_size=None, **kwargs):
        self.unet_being_trained.train()
        with self.accelerator.autocast():
            loss = self.imagen(unet=self.unet_being_trained, unet_number=unet_number, **kwargs)
        self.accelerator.backward(loss)  # DDP gradient all-reduce
        if self.max_grad_norm is not None:
            self.accelerator.clip_grad_norm_(self.unet_being_trained.parameters(), self.max_grad_norm)
        self.optim0.step()
        self.optim0.zero_grad()
        if self.use_ema:
            self.ema_unets[unet_number - 1].update()
        self.steps[unet_number - 1] += 1
        return loss.item()

    @torch.no_grad()
    def valid_step(self, unet_number=1, **kwargs):
        self.unet_being_trained.eval()
        with self.accelerator.autocast():
            loss = self.imagen(unet=self.unet_being_trained, unet_number=unet_number, **kwargs)
        return loss.item()

    @contextmanager
    def use_ema_unets(self):
        if not self.use_ema:
            yield
            return
        trainable_unets = self.imagen.unets
        self.imagen.unets = torch.nn.ModuleList([ema.ema_model for ema in self.ema_unets])
        try:
            yield
        finally:
            self.imagen.unets = trainable_unets

    @torch.no_grad()
    def sample(self, *args, **kwargs):
        context = nullcontext if kwargs.pop("use_non_ema", False) else self.use_ema_unets
        if not self.is_main:
            kwargs["use_tqdm"] = False
        with context():
            return self.imagen.sample(*args, device=self.device, **kwargs)

    def save(self, path, overwrite=True, **kwargs):
        self.accelerator.wait_for_everyone()  # every process must arrive here
        if not self.can_checkpoint:
            return
        assert overwrite or not os.path.exists(path)
        save_obj = dict(model=self.imagen.state_dict(), steps=self.steps.cpu(),
                        optim0=self.optim0.state_dict(), **kwargs)
        if self.use_ema:
            save_obj["ema"] = self.ema_unets.state_dict()
        torch.save(save_obj, path)
        self.print(f"checkpoint saved to {path}")
