"""Entry point of a RETURNN PyTorch multi-GPU training (`torchrun --nproc_per_node=4 rnn.py
blstm_ctc.config`): reads the Python config, builds the train/dev/eval datasets (each worker
reading its own partition of the training data) and runs the engine, which trains a (sub)epoch,
saves the model and evaluates after every epoch.

Thread: https://github.com/rwth-i6/returnn/issues/1454 ("multi-gpu training: training hangs after one
sub-epoch"), fixed by https://github.com/rwth-i6/returnn/pull/1461 ("Torch distributed: fix
synchronization", merged as ab8521d)
Project: rwth-i6/returnn (returnn/torch/engine.py)
What hung: training stops right after the first sub-epoch. The diagnosis in the thread: "data loader
iterator initialization requires synchronization of all instances (each instance should run into
`dist.new_group(backend="gloo")` and wait for others there). Sadly next epoch training data loader
iterator initialization of those which didn't need to run evaluations waited and synchronized with
the eval data loader initialization of the rank 0 instance. As a consequence, the training data
loader initialization of the rank 0 instance can't be synchronized anymore, while the other
instances have been waiting for the `all_reduce` op." The engine calls `eval_model()` on rank 0 only;
its `for ... in data_loader` over the eval DataLoader -- built on an `IterDataPipe`, for which
`DataLoader.__iter__` creates a gloo group and broadcasts a shared seed -- is matched by the other
ranks' `iter(self._train_dataloader)` of the next epoch; they go on to the `_has_data` all-reduce,
while rank 0, after its evaluation, blocks creating its own next train iterator.
Fix (the PR, merged): `eval_model()` is called on every rank; inside, ranks other than 0 create the
eval data loader iterator (`iter(data_loader)`) "for proper synchronization" and skip the
evaluation itself; only rank 0 prints the scores.
Expected rankcheck finding: RC101 on the rank-0-only `self.eval_model()` in
returnn_lite/torch/engine.py, which reaches the collective DataLoader iterator construction.
(Trimmed: RETURNN's frontend (rf) run context, learning-rate control files, the Updater, gradient
noise/clipping, chunking. Inferred: the toy npz dataset and the model/train_step in the config;
the training data partition per worker stands for RETURNN's own dataset distribution options.)
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
