"""Subclass calls the inherited gather_predictions() (all_gather_object) under `if self.rank == 0`, self.rank set in the base __init__: hangs."""
import argparse

import torch.distributed as dist
import torch.nn as nn

from classifier_trainer import ClassifierTrainer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    trainer = ClassifierTrainer(nn.Linear(20, 3), lr=1e-3)
    for _ in range(args.epochs):
        trainer.train_epoch(steps=40)
        trainer.evaluate(n_batches=5)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
