"""Safe twin of imagen_pytorch_trainer_save_inside_is_main_block/train_imagen.py: only the
sampling stays under `trainer.is_main`; `trainer.save(...)` is called on every process, so every
process reaches the `accelerator.wait_for_everyone()` inside `ImagenTrainer.save`, and only the
checkpointing process writes the file.

Thread: https://github.com/lucidrains/imagen-pytorch/issues/309
"""
import argparse
import os

import torch
from imagen_pytorch import Imagen, Unet
from imagen_pytorch.data import Dataset
from torch.utils.data import DataLoader

from imagen_trainer import ImagenTrainer


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data_dir", default="data/cc_subset")
    p.add_argument("--num_steps", type=int, default=200_000)
    p.add_argument("--batch_size", type=int, default=16)
    p.add_argument("--sample_every", type=int, default=2000)
    p.add_argument("--results_dir", default="./results")
    p.add_argument("--checkpoint_dir", default="./checkpoints")
    return p.parse_args()


def cycle(dl):
    while True:
        for batch in dl:
            yield batch


def main():
    args = parse_args()
    unet1 = Unet(dim=128, cond_dim=512, dim_mults=(1, 2, 3, 4), num_resnet_blocks=3,
                 layer_attns=(False, True, True, True), layer_cross_attns=(False, True, True, True))
    imagen = Imagen(unets=(unet1,), image_sizes=(64,), timesteps=1000, cond_drop_prob=0.1,
                    text_encoder_name="google/t5-v1_1-base")
    trainer = ImagenTrainer(imagen, lr=1e-4, max_grad_norm=1.0)

    dataset = Dataset(args.data_dir, image_size=64)
    train_dl = cycle(DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=4))
    os.makedirs(args.results_dir, exist_ok=True)
    os.makedirs(args.checkpoint_dir, exist_ok=True)

    for i in range(args.num_steps):
        images, texts = next(train_dl)
        loss = trainer.train_step(unet_number=1, max_batch_size=4, images=images, texts=texts)
        trainer.print(f"step {i}: loss {loss:.4f}")

        if not (i % 50):
            val_images, val_texts = next(train_dl)
            valid_loss = trainer.valid_step(unet_number=1, images=val_images, texts=val_texts)
            trainer.print(f"step {i}: valid loss {valid_loss:.4f}")

        if not (i % args.sample_every):
            if trainer.is_main:  # sampling only needs one process
                images = trainer.sample(texts=["a photo of a dog on the beach"], batch_size=1,
                                        stop_at_unet_number=1, return_pil_images=True)  # List[Image]
                images[0].save(os.path.join(args.results_dir, f"sample_step{i}.png"))
            # every process: save() waits for everyone, then only the checkpointing process writes
            trainer.save(os.path.join(args.checkpoint_dir, f"checkpoint_step{i}.pt"))


if __name__ == "__main__":
    main()
