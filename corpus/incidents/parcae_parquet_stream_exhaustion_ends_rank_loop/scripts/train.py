"""Parcae (looped/recurrent LM) pretraining with Lightning Fabric (FSDP) on per-rank parquet shards.

Thread: https://github.com/sandyresearch/parcae/issues/12 ("Upstream data-exhaustion hang", open)
Project: sandyresearch/parcae (scripts/train.py, recpre/huggingface_dataset.py, recpre/data_loading_utils.py)
What hung: "whichever rank holds the least data exhausts its shards first. When it does, it leaves
the training loop without raising; the remaining ranks then block in the next collective until the
NCCL watchdog aborts them ~30 min later." The reporter traces it to three things: `scripts/train.py`
"hardcodes `repetitions=None` for the `pqds`/`pqds-pure` path (the `hfds` path a few lines above does
honour `curr_config.repetitions`), so a rank's stream is finite"; `ParquetStreamPure.__iter__` ends
with `while self._state["file_idx"] < len(self.parquet_files):` -- "Exhaustion is a normal loop exit,
not an error"; and the packing wrapper "does the same thing". The ranks' file slices differ in size
(`parquet_files[process_rank::8]`), so the `for ... in train_iterator` loop, whose body runs the FSDP
forward/backward and the every-32-steps exit all-reduce, runs a different number of times per rank.
Fix: none merged in the stored thread (the issue is open). The twin follows the reporter's first
point: the pqds path honours `curr_config.repetitions` like the hfds path, so every rank's stream
wraps around and the loop ends on the step count, which is the same on every rank (inferred).
Expected rankcheck finding: RC103 on the `for input_ids, labels, _ in train_iterator:` header in
`train`, a loop over a per-rank finite stream whose body issues collectives.
Inferred: the config objects, model and loss, the packing details and the logging are written for
this reconstruction; the dataset/loop structure follows the snapshot of scripts/train.py.
"""
import argparse
import time
from dataclasses import dataclass, field

import lightning as L
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from recpre.data_loading_utils import PackedIterableDataset
from recpre.huggingface_dataset import ParquetStreamPure


@dataclass
class DataEntry:
    type: str = "pqds-pure"
    data_dir: str = "data/fineweb_edu_tok"
    repetitions: int | None = 4


@dataclass
class CLISettings:
    data_config: list = field(default_factory=lambda: [DataEntry()])
    block_size: int = 1024
    micro_batch_size: int = 8
    max_steps: int = 20_000
    log_step_interval: int = 32
    lr: float = 6e-4
    eos_id: int = 0
    vocab_size: int = 32768


def create_dataloader(cfg, fabric):
    datasets = []
    for curr_config in cfg.data_config:
        if "pqds" in curr_config.type:
            dataset = ParquetStreamPure(
                dataset_folder_path=curr_config.data_dir,
                num_processes=fabric.world_size,
                process_rank=fabric.global_rank,
                repetitions=None,
                block_size=cfg.block_size,
            )
        else:
            raise ValueError(f"Unsupported dataset type: {curr_config.type}")
        datasets.append(dataset)
    packed = PackedIterableDataset(datasets[0], cfg.block_size, cfg.eos_id)
    return DataLoader(packed, batch_size=cfg.micro_batch_size, num_workers=0)


def train_step(input_ids, labels, fabric, state):
    model, optimizer = state["model"], state["optimizer"]
    logits = model(input_ids)
    loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())
    fabric.backward(loss)  # FSDP reduce-scatter of the gradients
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    state["microbatch_step"] += 1
    state["optimizer_step"] += 1
    state["last_loss"] = loss.detach()


def log_step(fabric, state, step_time):
    global_loss = fabric.all_reduce(state["last_loss"])
    fabric.print(f"step {state['optimizer_step']}: loss {global_loss.item():.4f} ({step_time:.1f}s)")


def train(fabric, state, cfg):
    train_iterator = iter(state["train_dataloader"])
    fabric.barrier()
    step_time = 0.0
    for input_ids, labels, _ in train_iterator:  # expect: RC103
        t0 = time.time()
        train_step(input_ids, labels, fabric, state)
        step_time += time.time() - t0
        step = state["microbatch_step"]

        if torch.distributed.is_initialized() and step % 32 == 0:
            exit_tensor = torch.as_tensor([int(state["should_exit_training"])], device=fabric.device)
            torch.distributed.all_reduce(exit_tensor, torch.distributed.ReduceOp.MIN)
            state["should_exit_training"] = bool(exit_tensor.item())

        if step % cfg.log_step_interval == 0:
            log_step(fabric, state, step_time)
            step_time = 0.0

        if state["should_exit_training"] and step % 32 == 0:
            break
        if state["optimizer_step"] >= cfg.max_steps - 1:
            fabric.print(f"Exiting training orderly after completion of {step + 1} steps.")
            break
    fabric.print("Training finished.")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", default="data/fineweb_edu_tok")
    parser.add_argument("--devices", type=int, default=8)
    args = parser.parse_args()
    cfg = CLISettings(data_config=[DataEntry(data_dir=args.data_dir)])

    fabric = L.Fabric(accelerator="cuda", devices=args.devices, strategy="fsdp", precision="bf16-mixed")
    fabric.launch()
    model = nn.Sequential(nn.Embedding(cfg.vocab_size, 768), nn.Linear(768, 768), nn.GELU(), nn.Linear(768, cfg.vocab_size))
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=cfg.lr))
    loader = fabric.setup_dataloaders(create_dataloader(cfg, fabric), use_distributed_sampler=False)
    state = {"model": model, "optimizer": optimizer, "train_dataloader": loader, "microbatch_step": 0,
             "optimizer_step": 0, "should_exit_training": False, "last_loss": None}
    train(fabric, state, cfg)


if __name__ == "__main__":
    main()
