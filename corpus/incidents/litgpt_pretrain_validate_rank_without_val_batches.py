"""LitGPT pretraining (`litgpt pretrain`, litgpt/pretrain.py of 0.5.13) of a small model on plain
text files with the `TextFiles` data module, on 8 GPUs of one node with the FSDP strategy
(`--devices 8`). The validation split is a handful of text files tokenized into litdata chunks;
litdata's `StreamingDataset` hands the chunks out to the ranks, so with a small validation set some
ranks get no chunk at all and their `val_dataloader` yields zero batches.

Thread: https://github.com/Lightning-AI/litgpt/issues/2319 ("litgpt pretrain crashes or deadlocks
when a rank's val_dataloader yields zero batches (multi-GPU FSDP)")
Project: Lightning-AI/litgpt 0.5.13 with litdata 0.2.72 (Fabric FSDP)
What hung: the reporter: unpatched, `validate()` crashes on the empty rank at
`torch.stack(losses).mean()` ("stack expects a non-empty TensorList"); "if that crash is naively
patched around (e.g. `if losses: ... else: return NaN`): ranks with zero batches skip the
`validate()` loop entirely and reach `fabric.barrier()` early, while ranks *with* batches keep
calling `model(input_ids)` inside the loop. Since `model()` under FSDP triggers a distributed
all-gather collective, the \"full\" ranks hang indefinitely waiting for peers that already moved past
that collective" (a subset of the GPUs frozen at 100% utilization, the rest idle). This file is the
reporter's patched `validate()`, the form that deadlocks.
Fix (litgpt#2321, by a commenter on the issue, still open): "lockstep MIN-reduce on `has_batch`
before each validate step, NaN when no rank has data" -- every rank pulls its next batch with
`next(it, None)`, the ranks MIN-reduce whether they got one, and all of them leave the loop as soon
as any rank ran out.
Expected rankcheck finding: RC103 on the validation loop, whose trip count is this rank's share of
the streamed validation chunks and whose body runs the FSDP forward.
(Trimmed: the throughput monitor, FLOPs measurement, logger choice and the torch.compile
workaround of pretrain.py are left out.)
"""
import math
import time
from datetime import timedelta
from pathlib import Path
from typing import Optional

import lightning as L
import torch
import torch.nn as nn
from lightning.fabric.strategies import FSDPStrategy
from torch.utils.data import DataLoader
from torchmetrics.aggregation import RunningMean

from litgpt import Tokenizer
from litgpt.args import EvalArgs, TrainArgs
from litgpt.data import DataModule, TextFiles
from litgpt.model import GPT, Block, Config
from litgpt.utils import (
    CycleIterator,
    chunked_cross_entropy,
    find_resume_path,
    init_out_dir,
    num_parameters,
    parse_devices,
    reset_parameters,
)


def setup(
    model_name: str = "pythia-160m",
    out_dir: Path = Path("out/pretrain/custom"),
    precision: str = "bf16-mixed",
    resume: bool = False,
    train_data_path: Path = Path("custom_texts/train"),
    val_data_path: Optional[Path] = Path("custom_texts/val"),
    tokenizer_dir: Path = Path("checkpoints/EleutherAI/pythia-160m"),
    train: TrainArgs = TrainArgs(
        save_interval=1000,
        log_interval=1,
        global_batch_size=512,
        micro_batch_size=4,
        max_tokens=int(3e9),
        max_norm=1.0,
        min_lr=4e-5,
        lr_warmup_steps=2000,
        tie_embeddings=False,
    ),
    eval: EvalArgs = EvalArgs(interval=1000, max_iters=100, initial_validation=False, final_validation=True),
    devices: int = 8,
    num_nodes: int = 1,
    seed: int = 42,
) -> None:
    config = Config.from_name(model_name)
    devices = parse_devices(devices)
    out_dir = init_out_dir(out_dir)
    data = TextFiles(train_data_path=train_data_path, val_data_path=val_data_path, num_workers=4)

    if devices * num_nodes > 1:
        strategy = FSDPStrategy(auto_wrap_policy={Block}, state_dict_type="full", sharding_strategy="HYBRID_SHARD")
    else:
        strategy = "auto"
    fabric = L.Fabric(devices=devices, num_nodes=num_nodes, strategy=strategy, precision=precision)
    fabric.launch()
    fabric.print(f"Loading tokenizer from {tokenizer_dir}")
    tokenizer = Tokenizer(tokenizer_dir)
    main(fabric, devices, seed, resume, config, data, out_dir, tokenizer_dir, tokenizer, train, eval, num_nodes)


def main(fabric, devices, seed, resume, config, data, out_dir, tokenizer_dir, tokenizer, train, eval, num_nodes=1):
    fabric.seed_everything(seed)
    t0 = time.perf_counter()
    with fabric.init_module(empty_init=True):
        model = GPT(config)
    model.apply(model._init_weights)
    fabric.print(f"Time to instantiate model: {time.perf_counter() - t0:.02f} seconds.")
    fabric.print(f"Total parameters: {num_parameters(model):,}")

    model = fabric.setup(model)
    reset_parameters(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=0.1, betas=(0.9, 0.95), fused=True)
    optimizer = fabric.setup_optimizers(optimizer)

    train_dataloader, val_dataloader = get_dataloaders(fabric, data, tokenizer, train, model.max_seq_length)
    train_dataloader, val_dataloader = fabric.setup_dataloaders(train_dataloader, val_dataloader)

    state = {"model": model, "optimizer": optimizer, "train_dataloader": train_dataloader, "iter_num": 0, "step_count": 0}
    resume = find_resume_path(resume, out_dir)
    if resume:
        fabric.print(f"Resuming training from {resume}")
        fabric.load(resume, state)

    fit(fabric, devices, state, train_dataloader, val_dataloader, out_dir, tokenizer_dir, train, eval, num_nodes)
    save_checkpoint(fabric, state, out_dir / "final" / "lit_model.pth")


def fit(fabric, devices, state, train_dataloader, val_dataloader, out_dir, tokenizer_dir, train, eval, num_nodes=1):
    model = state["model"]
    optimizer = state["optimizer"]

    if eval.initial_validation:
        val_loss = validate(fabric, model, val_dataloader, max_iters=eval.max_iters)
        val_loss = f"{val_loss:.3f}"
    else:
        fabric.print("Verifying settings ...")
        validate(fabric, model, val_dataloader, max_iters=2, verbose=False)  # sanity check
        val_loss = "n/a"

    max_tokens_per_device = train.max_tokens // fabric.world_size
    tokens_per_iter = train.micro_batch_size * model.max_seq_length
    max_iters = max_tokens_per_device // tokens_per_iter
    accum_iters = train.gradient_accumulation_iters(devices, num_nodes)
    log_iter_interval = train.log_interval * accum_iters
    train_iterator = CycleIterator(train_dataloader)
    running_loss = RunningMean(window=accum_iters, sync_on_compute=False).to(fabric.device)
    warmup_iters = train.warmup_iters(devices, num_nodes, max_iters, train_dataloader)
    fabric.barrier()
    total_t0 = time.perf_counter()

    for train_data in train_iterator:
        if state["iter_num"] >= max_iters:
            break

        lr = get_lr(optimizer.defaults["lr"], state["iter_num"], warmup_iters, max_iters, train.min_lr)
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr

        state["iter_num"] += 1
        iter_t0 = time.perf_counter()
        input_ids = train_data[:, 0 : model.max_seq_length].contiguous().long()
        targets = train_data[:, 1 : (model.max_seq_length + 1)].contiguous().long()

        is_accumulating = state["iter_num"] % accum_iters != 0
        with fabric.no_backward_sync(model, enabled=is_accumulating):
            logits = model(input_ids)
            loss = chunked_cross_entropy(logits, targets)
            fabric.backward(loss / accum_iters)
        running_loss.update(loss.detach())

        if not is_accumulating:
            fabric.clip_gradients(model, optimizer, max_norm=train.max_norm)
            optimizer.step()
            optimizer.zero_grad()
            state["step_count"] += 1

        if state["iter_num"] % log_iter_interval == 0:
            loss = running_loss.compute().item()
            t1 = time.perf_counter()
            remaining = (t1 - total_t0) / state["iter_num"] * (max_iters - state["iter_num"])
            fabric.print(
                f"iter {state['iter_num']} step {state['step_count']} | loss train: {loss:.3f}, val: {val_loss} |"
                f" iter time: {(t1 - iter_t0) * 1000:.2f} ms remaining time: {timedelta(seconds=int(remaining))!s}"
            )
            fabric.log_dict({"loss": loss, "iter": state["iter_num"], "learning_rate": lr}, step=state["iter_num"] - 1)

        if val_dataloader is not None and not is_accumulating and state["step_count"] % eval.interval == 0:
            t0 = time.perf_counter()
            val_loss = validate(fabric, model, val_dataloader, max_iters=eval.max_iters)
            val_loss = val_loss.item()
            td = time.perf_counter() - t0
            fabric.print(f"iter {state['iter_num']}: val loss {val_loss:.4f}, val time: {td * 1000:.2f} ms")
            fabric.log_dict({"val_loss": val_loss, "val_ppl": math.exp(val_loss)}, step=state["iter_num"] - 1)
            fabric.barrier()

        if train.save_interval is not None and not is_accumulating and state["step_count"] % train.save_interval == 0:
            save_checkpoint(fabric, state, out_dir / f"step-{state['step_count']:08d}" / "lit_model.pth")

    if eval.final_validation:
        val_loss = validate(fabric, model, val_dataloader, max_iters=eval.max_iters)
        fabric.log_dict({"val_loss": val_loss, "val_ppl": math.exp(val_loss)}, step=state["iter_num"])
        fabric.print(f"Final evaluation | val loss: {val_loss.item():.3f} | val ppl: {math.exp(val_loss):.3f}")


@torch.no_grad()
def validate(fabric: L.Fabric, model: nn.Module, val_dataloader: DataLoader, max_iters: int, verbose: bool = True) -> torch.Tensor:
    fabric.barrier()
    if verbose:
        fabric.print("Validating ...")
    model.eval()

    losses = []
    for k, batch in enumerate(val_dataloader):  # expect: RC103
        if k >= max_iters:
            break
        input_ids = batch[:, 0 : model.max_seq_length].contiguous().long()
        targets = batch[:, 1 : (model.max_seq_length + 1)].contiguous().long()
        logits = model(input_ids)
        loss = chunked_cross_entropy(logits, targets)
        losses.append(loss)

    # a rank whose validation shard is empty has nothing to stack
    if losses:
        val_loss = torch.stack(losses).mean()
    else:
        val_loss = torch.tensor(float("nan"), device=fabric.device)
    model.train()
    fabric.barrier()
    return val_loss


def get_dataloaders(fabric: L.Fabric, data: DataModule, tokenizer: Tokenizer, train: TrainArgs, block_size: int):
    data.connect(tokenizer=tokenizer, batch_size=train.micro_batch_size, max_seq_length=block_size)
    with fabric.rank_zero_first():
        data.prepare_data()
    data.setup()
    return data.train_dataloader(), data.val_dataloader()


def get_lr(learning_rate: float, it: int, warmup_iters: int, max_iters: int, min_lr: float) -> float:
    # 1) linear warmup for warmup_iters steps
    if it < warmup_iters:
        return learning_rate * it / warmup_iters
    # 2) if it > max_iters, return min learning rate
    if it > max_iters:
        return min_lr
    # 3) in between, use cosine decay down to min learning rate
    decay_ratio = (it - warmup_iters) / (max_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


def save_checkpoint(fabric: L.Fabric, state: dict, checkpoint_file: Path) -> None:
    model = state["model"]
    checkpoint_file.parent.mkdir(parents=True, exist_ok=True)
    fabric.print(f"Saving checkpoint to {str(checkpoint_file)!r}")
    fabric.save(checkpoint_file, state)
    if fabric.global_rank == 0:
        model.config.to_json(checkpoint_file.parent / "model_config.json")


if __name__ == "__main__":
    from jsonargparse import CLI

    torch.set_float32_matmul_precision("high")
    CLI(setup)
