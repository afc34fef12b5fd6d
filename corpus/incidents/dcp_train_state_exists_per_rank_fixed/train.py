"""Resume logic of the training script."""
import argparse

from manager import CheckpointManager


def resume(model, optimizer, dataloader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt_root", default="/lustre/ckpts/run1")
    parser.add_argument("--resume_step", type=int, default=None)
    args = parser.parse_args()
    manager = CheckpointManager(args.ckpt_root, model, optimizer)
    start_step = 0
    if args.resume_step is not None:
        train_state = manager.load(args.resume_step)
        start_step = train_state.get("step", args.resume_step)
        dataloader.load_state_dict(train_state.get("dataloader", {}))
    return manager, start_step
