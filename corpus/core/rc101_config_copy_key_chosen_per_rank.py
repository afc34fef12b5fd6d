"""The look-alike of safe_config_copy_with_per_step_keys.py: a copy of the configuration, but the
key the save tests is stored per rank (rank 0 alone asks for the DeepSpeed save), and another key
is set on rank 0 only and read back with `get`; the epoch's record, a display with the
configuration spread into it, overrides the engine on rank 0 after the spread: the ranks take different arms of both tests."""
import copy

import torch.distributed as dist


def save_model(model, info_dict):
    if info_dict["train_engine"] == "deepspeed":
        model.save_checkpoint(save_dir=info_dict["model_dir"])  # expect: RC101
    dist.barrier()


def train(model, loader, configs):
    info_dict = copy.deepcopy(configs)
    rank = dist.get_rank()
    for batch in loader:
        info_dict["loss"] = model(batch)
        info_dict["train_engine"] = "deepspeed" if rank == 0 else "torch_ddp"
        save_model(model, info_dict)


def end_epoch(model, configs, loss):
    info_dict = {"loss": loss, **configs, "train_engine": "deepspeed" if dist.get_rank() == 0 else configs["train_engine"]}
    if info_dict["train_engine"] == "deepspeed":
        model.save_checkpoint(save_dir=info_dict["model_dir"])  # expect: RC101


def evaluate(model, configs):
    info_dict = dict(configs)
    if dist.get_rank() == 0:
        info_dict["sync_metrics"] = True
    if info_dict.get("sync_metrics"):
        dist.barrier()  # expect: RC101


def main(configs, model, loader):
    import deepspeed

    deepspeed.init_distributed(dist_backend="gloo", timeout=__import__("datetime").timedelta(minutes=5))
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=configs["ds_config"])
    train(engine, loader, configs)
    evaluate(engine, configs)
    end_epoch(engine, configs, 0.0)
