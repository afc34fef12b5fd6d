"""Distillation/finetuning entry point of a FastVideo-style trainer (torchrun, FSDP2 over the
world, optional sequence parallelism); the latent dataloader is built before the model."""
import argparse

import torch
import torch.distributed as dist
from diffusers import WanTransformer3DModel
from torch.distributed.fsdp import fully_shard

from fastvideo_lite.dataset.parquet_dataset_iterable_style import build_parquet_iterable_style_dataloader
from fastvideo_lite.distributed import init_distributed_environment


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_path", required=True)
    parser.add_argument("--pretrained_model_name_or_path", default="Wan-AI/Wan2.1-T2V-1.3B-Diffusers")
    parser.add_argument("--sp_size", type=int, default=1)
    parser.add_argument("--train_batch_size", type=int, default=1)
    parser.add_argument("--dataloader_num_workers", type=int, default=2)
    parser.add_argument("--max_train_steps", type=int, default=2000)
    parser.add_argument("--learning_rate", type=float, default=1e-5)
    args = parser.parse_args()

    init_distributed_environment(sp_size=args.sp_size)
    _, loader = build_parquet_iterable_style_dataloader(args.data_path, args.train_batch_size,
                                                        args.dataloader_num_workers)

    transformer = WanTransformer3DModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="transformer",
                                                        torch_dtype=torch.bfloat16).cuda()
    for block in transformer.blocks:
        fully_shard(block)
    fully_shard(transformer)
    optimizer = torch.optim.AdamW(transformer.parameters(), lr=args.learning_rate)

    step, data_iter = 0, iter(loader)
    while step < args.max_train_steps:
        latents, text_embeds = next(data_iter)
        latents, text_embeds = latents.cuda(), text_embeds.cuda()
        noise = torch.randn_like(latents)
        t = torch.randint(0, 1000, (latents.shape[0],), device=latents.device)
        sigma = (t.float() / 1000).view(-1, 1, 1, 1, 1)
        noisy = (1 - sigma) * latents + sigma * noise
        pred = transformer(noisy.to(torch.bfloat16), t, text_embeds.to(torch.bfloat16), return_dict=False)[0]
        loss = torch.nn.functional.mse_loss(pred.float(), (noise - latents).float())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
