"""Safe twin of mace_patience_break_on_rank0.py: as in the merged fix of mace#1216, rank 0 no longer
breaks out of the epoch loop on its own when patience runs out; it sets an `exit_now` flag, and
after the end-of-epoch barrier every rank receives rank 0's flag through
`torch.distributed.broadcast(exit_now, src=0)` and all of them leave the loop together. (As
merged, the serial path no longer breaks at all -- a non-hang regression reported in mace#1384;
kept as merged.)

Thread: https://github.com/ACEsuit/mace/pull/1216
"""
import argparse
import dataclasses
import json
import logging
import os
import time
from contextlib import nullcontext
from typing import Any, Dict, Optional, Tuple

import numpy as np
import torch
import torch.distributed
from torch.nn.parallel import DistributedDataParallel
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler
from torch_ema import ExponentialMovingAverage
from torchmetrics import Metric

from mace import modules
from mace.tools import torch_geometric


def init_distributed(args):
    """Returns (rank, local_rank, world_size) and initialises the process group (torchrun)."""
    if not args.distributed:
        return 0, 0, 1
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
    return rank, local_rank, world_size


@dataclasses.dataclass
class CheckpointState:
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    lr_scheduler: torch.optim.lr_scheduler.ReduceLROnPlateau


class CheckpointHandler:
    def __init__(self, directory: str, tag: str, keep: bool = False):
        self.directory = directory
        self.tag = tag
        self.keep = keep
        os.makedirs(directory, exist_ok=True)

    def _path(self, epochs: int) -> str:
        return os.path.join(self.directory, f"{self.tag}_epoch-{epochs}.pt")

    def save(self, state: CheckpointState, epochs: int, keep_last: bool = False) -> None:
        if not keep_last and not self.keep:
            for name in os.listdir(self.directory):
                if name.startswith(self.tag + "_epoch-"):
                    os.remove(os.path.join(self.directory, name))
        torch.save(
            {
                "model": state.model.state_dict(),
                "optimizer": state.optimizer.state_dict(),
                "lr_scheduler": state.lr_scheduler.state_dict(),
            },
            self._path(epochs),
        )

    def load_latest(self, state: CheckpointState, device: torch.device) -> Optional[int]:
        names = [n for n in os.listdir(self.directory) if n.startswith(self.tag + "_epoch-")]
        if not names:
            return None
        epochs = max(int(n.split("epoch-")[1].split(".")[0]) for n in names)
        checkpoint = torch.load(self._path(epochs), map_location=device)
        state.model.load_state_dict(checkpoint["model"])
        state.optimizer.load_state_dict(checkpoint["optimizer"])
        state.lr_scheduler.load_state_dict(checkpoint["lr_scheduler"])
        return epochs


class MetricsLogger:
    def __init__(self, directory: str, tag: str):
        self.path = os.path.join(directory, tag + "_train.txt")
        os.makedirs(directory, exist_ok=True)

    def log(self, d: Dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps({k: float(v) if isinstance(v, (np.floating, torch.Tensor)) else v for k, v in d.items()}) + "\n")


class MACELoss(Metric):
    def __init__(self, loss_fn: torch.nn.Module):
        super().__init__()
        self.loss_fn = loss_fn
        self.add_state("total_loss", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.add_state("num_data", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.add_state("delta_es_per_atom", default=[], dist_reduce_fx="cat")
        self.add_state("delta_fs", default=[], dist_reduce_fx="cat")

    def update(self, batch, output):  # pylint: disable=arguments-differ
        loss = self.loss_fn(pred=output, ref=batch)
        self.total_loss += loss
        self.num_data += batch.num_graphs
        atoms = (batch.ptr[1:] - batch.ptr[:-1]).to(output["energy"].dtype)
        self.delta_es_per_atom.append((batch.energy - output["energy"]) / atoms)
        self.delta_fs.append(batch.forces - output["forces"])

    def compute(self):
        aux = {}
        aux["loss"] = (self.total_loss / self.num_data).item()
        delta_es_per_atom = torch.cat(self.delta_es_per_atom).detach().cpu().numpy() if isinstance(self.delta_es_per_atom, list) else self.delta_es_per_atom.detach().cpu().numpy()
        delta_fs = torch.cat(self.delta_fs).detach().cpu().numpy() if isinstance(self.delta_fs, list) else self.delta_fs.detach().cpu().numpy()
        aux["rmse_e_per_atom"] = float(np.sqrt(np.mean(np.square(delta_es_per_atom))))
        aux["rmse_f"] = float(np.sqrt(np.mean(np.square(delta_fs))))
        return aux["loss"], aux


def valid_err_log(valid_loss, eval_metrics, logger, epoch=None, valid_loader_name="Default"):
    eval_metrics["mode"] = "eval"
    eval_metrics["epoch"] = epoch
    eval_metrics["head"] = valid_loader_name
    logger.log(eval_metrics)
    phrase = "Initial" if epoch is None else f"Epoch {epoch}"
    logging.info(
        f"{phrase}: head: {valid_loader_name}, loss={valid_loss:8.8f}, "
        f"RMSE_E_per_atom={eval_metrics['rmse_e_per_atom'] * 1e3:8.2f} meV, "
        f"RMSE_F={eval_metrics['rmse_f'] * 1e3:8.2f} meV / A"
    )


def take_step(model, loss_fn, batch, optimizer, ema, output_args, max_grad_norm, device) -> Tuple[float, Dict[str, Any]]:
    start_time = time.time()
    batch = batch.to(device)
    batch_dict = batch.to_dict()
    optimizer.zero_grad(set_to_none=True)
    output = model(
        batch_dict,
        training=True,
        compute_force=output_args["forces"],
        compute_virials=output_args["virials"],
        compute_stress=output_args["stress"],
    )
    loss = loss_fn(pred=output, ref=batch)
    loss.backward()
    if max_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_grad_norm)
    optimizer.step()
    if ema is not None:
        ema.update()
    return loss, {"loss": loss.detach().cpu().numpy(), "time": time.time() - start_time}


def train_one_epoch(model, loss_fn, data_loader, optimizer, epoch, output_args, max_grad_norm, ema, logger, device, distributed_model=None, rank=0) -> None:
    model_to_train = model if distributed_model is None else distributed_model
    for batch in data_loader:
        _, opt_metrics = take_step(
            model=model_to_train,
            loss_fn=loss_fn,
            batch=batch,
            optimizer=optimizer,
            ema=ema,
            output_args=output_args,
            max_grad_norm=max_grad_norm,
            device=device,
        )
        opt_metrics["mode"] = "opt"
        opt_metrics["epoch"] = epoch
        if rank == 0:
            logger.log(opt_metrics)


def evaluate(model, loss_fn, data_loader, output_args, device) -> Tuple[float, Dict[str, Any]]:
    for param in model.parameters():
        param.requires_grad = False
    metrics = MACELoss(loss_fn=loss_fn).to(device)
    start_time = time.time()
    for batch in data_loader:
        batch = batch.to(device)
        batch_dict = batch.to_dict()
        output = model(
            batch_dict,
            training=False,
            compute_force=output_args["forces"],
            compute_virials=output_args["virials"],
            compute_stress=output_args["stress"],
        )
        metrics(batch, output)
    avg_loss, aux = metrics.compute()
    aux["time"] = time.time() - start_time
    metrics.reset()
    for param in model.parameters():
        param.requires_grad = True
    return avg_loss, aux


def train(
    model: torch.nn.Module,
    loss_fn: torch.nn.Module,
    train_loader,
    valid_loaders: Dict[str, Any],
    optimizer: torch.optim.Optimizer,
    lr_scheduler,
    start_epoch: int,
    max_num_epochs: int,
    patience: int,
    checkpoint_handler: CheckpointHandler,
    logger: MetricsLogger,
    eval_interval: int,
    output_args: Dict[str, bool],
    device: torch.device,
    ema: Optional[ExponentialMovingAverage] = None,
    max_grad_norm: Optional[float] = 10.0,
    distributed: bool = False,
    save_all_checkpoints: bool = False,
    distributed_model: Optional[DistributedDataParallel] = None,
    train_sampler: Optional[DistributedSampler] = None,
    rank: Optional[int] = 0,
):
    lowest_loss = np.inf
    valid_loss = np.inf
    patience_counter = 0
    keep_last = False

    logging.info("===========TRAINING===========")
    epoch = start_epoch

    # log validation loss before _any_ training
    for valid_loader_name, valid_loader in valid_loaders.items():
        valid_loss_head, eval_metrics = evaluate(model, loss_fn, valid_loader, output_args, device)
        valid_err_log(valid_loss_head, eval_metrics, logger, None, valid_loader_name)
    valid_loss = valid_loss_head  # consider only the last head for the checkpoint

    # variable used for broadcast by rank == 0 if epoch loop is exited early, e.g. patience
    exit_now = torch.zeros(1, device=device) if distributed else None
    while epoch < max_num_epochs:
        if epoch > start_epoch:
            lr_scheduler.step(metrics=valid_loss)

        # Train
        if distributed:
            train_sampler.set_epoch(epoch)
        train_one_epoch(
            model=model,
            loss_fn=loss_fn,
            data_loader=train_loader,
            optimizer=optimizer,
            epoch=epoch,
            output_args=output_args,
            max_grad_norm=max_grad_norm,
            ema=ema,
            logger=logger,
            device=device,
            distributed_model=distributed_model,
            rank=rank,
        )
        if distributed:
            torch.distributed.barrier()

        # Validate
        if epoch % eval_interval == 0:
            model_to_evaluate = model if distributed_model is None else distributed_model
            param_context = ema.average_parameters() if ema is not None else nullcontext()
            with param_context:
                for valid_loader_name, valid_loader in valid_loaders.items():
                    valid_loss_head, eval_metrics = evaluate(
                        model=model_to_evaluate,
                        loss_fn=loss_fn,
                        data_loader=valid_loader,
                        output_args=output_args,
                        device=device,
                    )
                    if rank == 0:
                        valid_err_log(valid_loss_head, eval_metrics, logger, epoch, valid_loader_name)
                valid_loss = valid_loss_head  # consider only the last head for the checkpoint
            if rank == 0:
                if valid_loss >= lowest_loss:
                    patience_counter += 1
                    if patience_counter >= patience:
                        logging.info(f"Stopping optimization after {patience_counter} epochs without improvement")
                        if exit_now is not None:
                            exit_now.fill_(1)
                    if save_all_checkpoints:
                        param_context = ema.average_parameters() if ema is not None else nullcontext()
                        with param_context:
                            checkpoint_handler.save(
                                state=CheckpointState(model, optimizer, lr_scheduler),
                                epochs=epoch,
                                keep_last=True,
                            )
                else:
                    lowest_loss = valid_loss
                    patience_counter = 0
                    param_context = ema.average_parameters() if ema is not None else nullcontext()
                    with param_context:
                        checkpoint_handler.save(
                            state=CheckpointState(model, optimizer, lr_scheduler),
                            epochs=epoch,
                            keep_last=keep_last,
                        )
                        keep_last = False or save_all_checkpoints
        if distributed:
            torch.distributed.barrier()
        if exit_now is not None:
            torch.distributed.broadcast(exit_now, src=0)
            if exit_now == 1:
                break

        epoch += 1

    logging.info("Training complete")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="MACE_model")
    parser.add_argument("--train_file", required=True)
    parser.add_argument("--valid_file", required=True)
    parser.add_argument("--test_file", default=None)
    parser.add_argument("--checkpoints_dir", default="checkpoints")
    parser.add_argument("--results_dir", default="results")
    parser.add_argument("--batch_size", type=int, default=10)
    parser.add_argument("--valid_batch_size", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--max_num_epochs", type=int, default=400)
    parser.add_argument("--patience", type=int, default=50)
    parser.add_argument("--eval_interval", type=int, default=1)
    parser.add_argument("--ema", action="store_true")
    parser.add_argument("--ema_decay", type=float, default=0.99)
    parser.add_argument("--clip_grad", type=float, default=10.0)
    parser.add_argument("--distributed", action="store_true")
    parser.add_argument("--device", default="cuda")
    return parser.parse_args()


def run(args) -> None:
    rank, local_rank, world_size = init_distributed(args)
    if args.distributed:
        torch.cuda.set_device(local_rank)
        device = torch.device(f"cuda:{local_rank}")
    else:
        device = torch.device(args.device)

    train_set = torch.load(args.train_file)
    valid_set = torch.load(args.valid_file)
    train_sampler, valid_sampler = None, None
    if args.distributed:
        train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True, drop_last=True, seed=123)
        valid_sampler = DistributedSampler(valid_set, num_replicas=world_size, rank=rank, shuffle=True, drop_last=True, seed=123)
    train_loader = torch_geometric.dataloader.DataLoader(
        dataset=train_set, batch_size=args.batch_size, sampler=train_sampler, shuffle=(train_sampler is None), drop_last=(train_sampler is None)
    )
    valid_loaders = {
        "Default": torch_geometric.dataloader.DataLoader(dataset=valid_set, batch_size=args.valid_batch_size, sampler=valid_sampler, shuffle=False, drop_last=False)
    }

    model = modules.ScaleShiftMACE(**torch.load(os.path.join(args.checkpoints_dir, "model_config.pt")))
    model.to(device)
    loss_fn = modules.WeightedEnergyForcesLoss(energy_weight=1.0, forces_weight=100.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, amsgrad=True)
    lr_scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.8, patience=50)
    checkpoint_handler = CheckpointHandler(directory=args.checkpoints_dir, tag=args.name)
    logger = MetricsLogger(directory=args.results_dir, tag=f"{args.name}_run-{rank}")
    ema = ExponentialMovingAverage(model.parameters(), decay=args.ema_decay) if args.ema else None
    output_args = {"energy": True, "forces": True, "virials": False, "stress": False}

    distributed_model = DDP(model, device_ids=[local_rank]) if args.distributed else None

    train(
        model=model,
        loss_fn=loss_fn,
        train_loader=train_loader,
        valid_loaders=valid_loaders,
        optimizer=optimizer,
        lr_scheduler=lr_scheduler,
        start_epoch=0,
        max_num_epochs=args.max_num_epochs,
        patience=args.patience,
        checkpoint_handler=checkpoint_handler,
        logger=logger,
        eval_interval=args.eval_interval,
        output_args=output_args,
        device=device,
        ema=ema,
        max_grad_norm=args.clip_grad,
        distributed=args.distributed,
        distributed_model=distributed_model,
        train_sampler=train_sampler,
        rank=rank,
    )

    logging.info("===========RESULTS===========")
    epoch = checkpoint_handler.load_latest(state=CheckpointState(model, optimizer, lr_scheduler), device=device)
    logging.info(f"Loaded model from epoch {epoch}")
    model.to(device)
    if args.distributed:
        distributed_model = DDP(model, device_ids=[local_rank])
    model_to_evaluate = model if not args.distributed else distributed_model
    for name, loader in valid_loaders.items():
        loss, metrics = evaluate(model_to_evaluate, loss_fn, loader, output_args, device)
        if rank == 0:
            valid_err_log(loss, metrics, logger, epoch, name)
    if rank == 0:
        torch.save(model.cpu(), os.path.join(args.checkpoints_dir, f"{args.name}.model"))
    if args.distributed:
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    run(parse_args())
