"""A training script validates on the main process with a freshly loaded VAE. It passes the
loader only `torch_dtype`: the `parallel_config` option that builds a device mesh (a collective
set-up) is left out, so `kwargs.pop("parallel_config", None)` gives None and the main process
builds no mesh alone."""
import torch
from accelerate import Accelerator

from mylib.modeling import AutoencoderKL


def main(args):
    accelerator = Accelerator()
    model = torch.nn.Linear(8, 8)
    optimizer = torch.optim.AdamW(model.parameters())
    model, optimizer = accelerator.prepare(model, optimizer)
    for step in range(args.max_train_steps):
        loss = model(torch.randn(4, 8)).pow(2).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    if accelerator.is_main_process:
        vae = AutoencoderKL.from_pretrained(args.vae_path, torch_dtype=torch.float16)
        print(vae.decoder.weight.shape)
    accelerator.end_training()
