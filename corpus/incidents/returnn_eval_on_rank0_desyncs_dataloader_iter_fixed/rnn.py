"""Entry point of a RETURNN PyTorch multi-GPU training (`torchrun --nproc_per_node=4 rnn.py
blstm_ctc.config`), after the fix of rwth-i6/returnn#1454: every rank enters the engine's
evaluation, and the ranks that do not evaluate still create the eval data loader iterators.

Thread: https://github.com/rwth-i6/returnn/issues/1454 ("multi-gpu training: training hangs after one
sub-epoch"), fixed by https://github.com/rwth-i6/returnn/pull/1461 ("Torch distributed: fix
synchronization", merged as ab8521d)
Project: rwth-i6/returnn (returnn/torch/engine.py)
Fix (the PR, merged): `eval_model()` is called unconditionally after each epoch; for each eval
dataset, ranks other than 0 run `iter(data_loader)` -- the collective part of the DataLoader over an
IterDataPipe -- and `continue`; the final score line is printed on rank 0 only.
Expected rankcheck finding: none (safe twin).
"""
import argparse
import os
import runpy

from returnn_lite.datasets import init_dataset
from returnn_lite.torch.engine import Engine


def load_config(path: str) -> dict:
    config = runpy.run_path(path)
    return {k: v for k, v in config.items() if not k.startswith("__")}


def main():
    parser = argparse.ArgumentParser(description="RETURNN-style PyTorch training")
    parser.add_argument("config", help="Python config file")
    parser.add_argument("--num-epochs", dest="num_epochs", type=int, default=None)
    args = parser.parse_args()

    config = load_config(args.config)
    if args.num_epochs is not None:
        config["num_epochs"] = args.num_epochs

    engine = Engine(config)
    rank = int(os.environ.get("RANK", 0)) if config.get("torch_distributed") is not None else 0
    world_size = int(os.environ.get("WORLD_SIZE", 1)) if config.get("torch_distributed") is not None else 1
    train_data = init_dataset(config["train"], default_kwargs={"name": "train", "partition_rank": rank,
                                                               "partition_size": world_size})
    dev_data = init_dataset(config["dev"], default_kwargs={"name": "dev"}) if "dev" in config else None
    eval_data = init_dataset(config["eval"], default_kwargs={"name": "eval"}) if "eval" in config else None
    engine.init_train_from_config(train_data=train_data, dev_data=dev_data, eval_data=eval_data)
    engine.train()


if __name__ == "__main__":
    main()
