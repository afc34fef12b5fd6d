"""Entry point of a CLIP-style pretraining run (`torchrun --nproc_per_node 8 -m pillar.main --name
ct_clip_base ...`): names the experiment, sets up logging and checkpoint folders, optionally resumes
the latest checkpoint, then trains the DDP-wrapped model.

Thread: https://github.com/YalaLab/pillar-pretrain/issues/4 ("Deadlock when experiment name already
exists - main.py"); fix proposed in https://github.com/YalaLab/pillar-pretrain/pull/9 ("Fix
distributed deadlock when experiment log path exists")
Project: YalaLab/pillar-pretrain (src/trainer/main.py, derived from open_clip's training script)
What hung: the reporter: "If the experiment name already exists, `main()` returns `-1` [...] this
check/early-exit seems to happen only on the master process, so the master process exits while the
other ranks have already entered distributed initialization / barriers and end up hanging [...]
resulting in an NCCL Timeout." Only the master (`is_master(args, local=args.log_local)`) looks at the
log path; when `out.log` exists and `--resume latest` is not given it returns, and the other ranks
go on to build the model and wrap it in DistributedDataParallel, whose constructor broadcasts the
parameters from rank 0 and waits for it.
Fix (the PR, as in the stored main.py): the master records `should_exit`, the decision is broadcast
with the project's `broadcast_object` (the helper already used for `resume_from`), and every rank
returns together.
Expected rankcheck finding: RC102 on the master-only `return -1` below, taken before DDP's
construction (and the later `broadcast_object`) that the other ranks enter.
(Trimmed: flash-attention and model-name handling, remote sync, codebase copy, W&B, the
multimodal/SigLIP variants, evaluation. Inferred: the training step; the thread is about startup.)
"""
import argparse
import glob
import logging
import os
import sys

import torch
from torch.nn.parallel import DistributedDataParallel

from pillar.distributed import broadcast_object, init_distributed_device, is_master


def parse_args(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--logs", default="./logs")
    parser.add_argument("--log-local", action="store_true")
    parser.add_argument("--resume", default=None)
    parser.add_argument("--epochs", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--dist-backend", default="nccl")
    parser.add_argument("--dist-url", default="env://")
    return parser.parse_args(argv)


def get_latest_checkpoint(path):
    checkpoints = sorted(glob.glob(os.path.join(path, "epoch_*.pt")), key=os.path.getmtime)
    return checkpoints[-1] if checkpoints else None


def main(argv):
    args = parse_args(argv)
    device = init_distributed_device(args)

    resume_latest = args.resume == "latest"
    log_base_path = os.path.join(args.logs, args.name)
    args.log_path = None
    if is_master(args, local=args.log_local):
        os.makedirs(log_base_path, exist_ok=True)
        log_filename = f"out-{args.rank}" if args.log_local else "out.log"
        args.log_path = os.path.join(log_base_path, log_filename)
        if os.path.exists(args.log_path) and not resume_latest:
            print("Error. Experiment already exists. Use --name {} to specify a new experiment.")
            return -1  # expect: RC102

    logging.basicConfig(filename=args.log_path, level=logging.INFO)
    args.checkpoint_path = os.path.join(log_base_path, "checkpoints")
    if is_master(args):
        os.makedirs(args.checkpoint_path, exist_ok=True)

    if resume_latest:
        resume_from = get_latest_checkpoint(args.checkpoint_path) if is_master(args) else None
        if args.distributed:
            resume_from = broadcast_object(args, resume_from)
        args.resume = resume_from

    model = torch.nn.Sequential(torch.nn.Linear(1024, 512), torch.nn.GELU(), torch.nn.Linear(512, 512)).to(device)
    if args.distributed:
        model = DistributedDataParallel(model, device_ids=[device], find_unused_parameters=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    start_epoch = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start_epoch = checkpoint["epoch"]

    for epoch in range(start_epoch, args.epochs):
        for _ in range(100):
            image_features = model(torch.randn(64, 1024, device=device))
            loss = image_features.pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if is_master(args):
            torch.save({"epoch": epoch + 1, "state_dict": model.state_dict(), "optimizer": optimizer.state_dict()},
                       os.path.join(args.checkpoint_path, f"epoch_{epoch + 1}.pt"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
