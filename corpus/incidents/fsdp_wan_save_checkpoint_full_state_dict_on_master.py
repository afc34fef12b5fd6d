"""Zero-to-Wan: fine-tune the Wan 2.1 text-to-video diffusion transformer with FSDP (v1, FULL_SHARD,
`torchrun --nproc_per_node=8 training/train.py ...`). Every `--checkpoint_every` steps the script
gathers a full state dict of the transformer and of the optimizer and writes them as safetensors.

Thread: https://github.com/Bria-AI/Zero-to-Wan/pull/1 ("bugfix: checkpoint saving hangup")
Project: Bria-AI/Zero-to-Wan (a from-scratch Wan 2.1 fine-tuning recipe on FSDP)
What hung: the PR, merged: "removing redundant check for 'master_process' causing hang-up when saving
checkpoint using >1 gpu". The save was gated on `... and master_process`, so only rank 0 entered
`save_checkpoint`, whose `transformer.state_dict()` under `StateDictType.FULL_STATE_DICT` and
`FSDP.optim_state_dict` all-gather the shards from every rank (`rank0_only=True` only decides who
keeps the result); rank 0 waited in that all-gather while the other ranks went on to the FSDP
forward of the next step.
Fix (the PR): the `master_process` conjunct is dropped from the step test, every rank calls
`save_checkpoint`, and the writing inside it stays under its own `if rank <= 0:`.
Expected rankcheck finding: RC101 on the `save_checkpoint(` call under the step test that includes
`master_process`.
(Trimmed: the Wan model, its flow-matching scheduler and the latent dataset are imported from the
project; wandb set-up and timing logs are shortened. The argparse options are inferred from the
project's training_args.py.)
"""
import argparse
import functools
import json
import os
import time

import torch
import torch.distributed as dist
from safetensors.torch import save_file
from torch.distributed.fsdp import FullOptimStateDictConfig, FullStateDictConfig, MixedPrecision, ShardingStrategy
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import StateDictType
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from transformers import get_cosine_schedule_with_warmup

from models.wan.modules.model import WanAttentionBlock, WanModel
from training.scheduler import FlowMatchScheduler
from training.video_dataset import setup_data_modules


def get_args():
    parser = argparse.ArgumentParser(description="Wan 2.1 FSDP fine-tuning")
    parser.add_argument("--starting_checkpoint_dir", type=str, required=True)
    parser.add_argument("--dataset_dir", type=str, required=True)
    parser.add_argument("--output_dir", type=str, default="outputs/wan")
    parser.add_argument("--train_batch_size", type=int, default=1)
    parser.add_argument("--learning_rate", type=float, default=1e-5)
    parser.add_argument("--num_warmup_steps", type=int, default=100)
    parser.add_argument("--max_steps", type=int, default=10000)
    parser.add_argument("--log_every", type=int, default=10)
    parser.add_argument("--checkpoint_every", type=int, default=500)
    parser.add_argument("--grad_clip_norm", type=float, default=1.0)
    parser.add_argument("--prompt_drop_prob", type=float, default=0.1)
    parser.add_argument("--resolution", type=str, default="480x832")
    parser.add_argument("--num_frames", type=int, default=81)
    parser.add_argument("--dataloader_num_workers", type=int, default=4)
    return parser.parse_args()


def shard_transformer(transformer):
    return FSDP(
        transformer,
        sharding_strategy=ShardingStrategy.FULL_SHARD,
        mixed_precision=MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32),
        auto_wrap_policy=functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={WanAttentionBlock}),
        device_id=torch.cuda.current_device(),
        sync_module_states=True,
        use_orig_params=True,
    )


def diffusion_loss(transformer, scheduler, batch, device, prompt_drop_prob):
    latents, text_embeds = batch
    latents = latents.to(device)
    keep = (torch.rand(len(text_embeds), device=device) >= prompt_drop_prob).float()
    context = [emb[0].to(device) * k for emb, k in zip(text_embeds, keep)]
    noise = torch.randn_like(latents)
    timestep = scheduler.timesteps[torch.randint(0, scheduler.num_train_timesteps, (1,))].to(device)
    noisy = scheduler.add_noise(original_samples=latents, noise=noise, timestep=timestep)
    target = scheduler.training_target(sample=latents, noise=noise, timestep=timestep)
    seq_len = latents.shape[2] * latents.shape[3] * latents.shape[4] // 4
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        pred = torch.stack(transformer(x=noisy, t=timestep, context=context, seq_len=seq_len)).float()
        loss = torch.nn.functional.mse_loss(pred, target.float()) * scheduler.training_weight(timestep)
    return loss


def mean_over_ranks(value):
    t = torch.tensor(value, device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    return t.item()


def save_checkpoint(transformer, optimizer, global_step, args, rank):
    with FSDP.state_dict_type(
        transformer,
        StateDictType.FULL_STATE_DICT,
        FullStateDictConfig(offload_to_cpu=True, rank0_only=True),
        FullOptimStateDictConfig(offload_to_cpu=True, rank0_only=True),
    ):
        model_state = transformer.state_dict()
        optim_state = FSDP.optim_state_dict(transformer, optimizer)

    save_dir = os.path.join(args.output_dir, f"checkpoint-{global_step}")
    os.makedirs(save_dir, exist_ok=True)
    if rank <= 0:
        save_file(model_state, os.path.join(save_dir, "diffusion_pytorch_model.safetensors"))
        with open(os.path.join(save_dir, "config.json"), "w") as f:
            json.dump(dict(transformer.config), f, indent=4)
        torch.save(optim_state, os.path.join(save_dir, "optimizer.pt"))


def main():
    args = get_args()
    dist.init_process_group(backend="nccl")
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    device = f"cuda:{local_rank}"
    torch.cuda.set_device(device)
    master_process = rank == 0

    transformer = WanModel.from_pretrained(args.starting_checkpoint_dir)
    transformer = shard_transformer(transformer)
    dist.barrier()

    optimizer = torch.optim.AdamW(
        [p for p in transformer.parameters() if p.requires_grad], lr=args.learning_rate, betas=(0.95, 0.99)
    )
    lr_scheduler = get_cosine_schedule_with_warmup(optimizer, args.num_warmup_steps, args.max_steps)
    _, train_dataloader = setup_data_modules(
        dir_path=args.dataset_dir,
        resolution=[int(x) for x in args.resolution.split("x")],
        num_frames=args.num_frames,
        batch_size=args.train_batch_size,
        num_workers=args.dataloader_num_workers,
    )
    scheduler = FlowMatchScheduler(shift=5, sigma_min=0.0, extra_one_step=True)
    scheduler.set_timesteps(1000, training=True)

    transformer.train()
    global_step = 0
    last_log = time.time()
    while global_step < args.max_steps:
        for batch in train_dataloader:
            if global_step >= args.max_steps:
                break
            loss = diffusion_loss(transformer, scheduler, batch, device, args.prompt_drop_prob)
            optimizer.zero_grad()
            loss.backward()
            grad_norm = transformer.clip_grad_norm_(args.grad_clip_norm).item()
            optimizer.step()
            lr_scheduler.step()

            if global_step % args.log_every == 0:
                avg_loss = mean_over_ranks(loss.item())
                if master_process:
                    per_step = (time.time() - last_log) / args.log_every
                    print(f"step {global_step} loss {avg_loss:.4f} grad_norm {grad_norm:.4f} {per_step:.2f}s/step")
                last_log = time.time()

            if global_step % args.checkpoint_every == 0 and global_step > 0 and master_process:
                save_checkpoint(transformer, optimizer, global_step, args, rank)  # expect: RC101

            global_step += 1

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
