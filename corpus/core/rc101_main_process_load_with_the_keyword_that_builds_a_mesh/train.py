"""The look-alike: the main process loads the VAE with a context-parallel configuration, so the
loader builds a device mesh on the main process alone while the others have gone on to
`end_training`."""
import torch
from accelerate import Accelerator

from mylib.modeling import AutoencoderKL


def main(args, parallel_config):
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
        vae = AutoencoderKL.from_pretrained(args.vae_path, torch_dtype=torch.float16, parallel_config=parallel_config)  # expect: RC101
        print(vae.decoder.weight.shape)
    accelerator.end_training()
