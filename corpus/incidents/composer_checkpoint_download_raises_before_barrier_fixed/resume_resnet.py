"""Resume a ResNet-50 ImageNet run with composer (0.3.x, January 2022) on several nodes
(`composer -n 8 resume_resnet.py --load-path s3://bucket/runs/r50/ep10.tar ...`): before training
continues, every node fetches the checkpoint archive from the object store and each process restores
the trainer state from it.

Thread: https://github.com/mosaicml/composer/pull/334 ("Guard `dist.barrier` in the checkpointer
with try/finally", closing mosaicml/composer#290)
Project: mosaicml/composer (the checkpoint loader is trimmed into composer_lite/checkpoint.py)
What hung: the PR, by the maintainer: "If one process hits a distributed barrier but another one
crashes before reaching it, then the process that hit the barrier will hang indefinitely.
Distributed barriers do not respond to sigterm." In `CheckpointLoader`, only the process with local
rank 0 downloads and extracts the node's checkpoint archive; when the archive was missing or the
download failed it raised (the `RuntimeError` re-raised from the `FileNotFoundError` of the
extraction) and left before the node barrier, while the other local ranks waited in
`dist.barrier()` forever, so the launcher never saw all processes of the node exit.
Fix (the PR, merged): the download and extraction are wrapped in `try:` with the barrier in the
`finally:`, so every rank reaches the barrier and the exception is re-raised after it ("Any
exception will be re-raised after the barrier passes. The launcher script will detect the process
crash and terminate the other ranks").
Expected rankcheck finding: none (safe twin; the barrier is in a `finally:`).
(Trimmed: the object-store providers, DeepSpeed checkpoint handling and the checkpoint saver. The
script builds the model and data with composer's public pieces and calls the trimmed loader before
`Trainer.fit`, where the composer Trainer of that version called it from `__init__`.)
"""
import argparse

from composer import Trainer
from composer.algorithms import BlurPool, ChannelsLast, LabelSmoothing
from composer.core.state import State
from composer.datasets import ImagenetDatasetHparams
from composer.models import ComposerResNet
from composer.optim import DecoupledSGDW, WarmUpLR
from composer.utils import ObjectStoreProviderHparams, dist

from composer_lite import CheckpointLoader


def parse_args():
    parser = argparse.ArgumentParser(description="Resume ResNet-50 on ImageNet with composer")
    parser.add_argument("--data-root", default="/datasets/imagenet")
    parser.add_argument("--load-path", required=True)
    parser.add_argument("--object-store-provider", default="s3")
    parser.add_argument("--object-store-container", default="runs")
    parser.add_argument("--checkpoint-folder", default=None)
    parser.add_argument("--max-duration", default="90ep")
    parser.add_argument("--batch-size", type=int, default=2048)
    parser.add_argument("--lr", type=float, default=2.048)
    return parser.parse_args()


def main():
    args = parse_args()
    model = ComposerResNet(model_name="resnet50", num_classes=1000)
    train_dl = ImagenetDatasetHparams(datadir=args.data_root, is_train=True).initialize_object(
        batch_size=args.batch_size // dist.get_world_size(), dataloader_hparams=None
    )
    eval_dl = ImagenetDatasetHparams(datadir=args.data_root, is_train=False).initialize_object(
        batch_size=args.batch_size // dist.get_world_size(), dataloader_hparams=None
    )
    optimizer = DecoupledSGDW(model.parameters(), lr=args.lr, momentum=0.875, weight_decay=5e-5)
    scheduler = WarmUpLR(optimizer, warmup_iters="8ep")
    trainer = Trainer(
        model=model,
        train_dataloader=train_dl,
        eval_dataloader=eval_dl,
        max_duration=args.max_duration,
        optimizers=optimizer,
        schedulers=scheduler,
        algorithms=[BlurPool(), ChannelsLast(), LabelSmoothing(alpha=0.1)],
    )

    object_store = ObjectStoreProviderHparams(
        provider=args.object_store_provider, container=args.object_store_container
    ).initialize_object()
    loader = CheckpointLoader(path=args.load_path, object_store=object_store)
    state: State = trainer.state
    loader.load_checkpoint(state, node_checkpoint_folder=args.checkpoint_folder)

    trainer.fit()


if __name__ == "__main__":
    main()
