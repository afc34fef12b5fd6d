"""wenet-shaped training loop: the per-step record is a copy of the configuration with the step,
the batch index and the loss stored into it under their own keys (by the loop, by helpers that
return it, by `update`), and the epoch's record is a display of its own keys and the
configuration spread into it. The engine the save and the backward test is the configuration's, alike
on every rank, whatever per-rank values went under the other keys. (The look-alike stores the
rank's own choice under the key that is tested.)"""
import copy

import torch.distributed as dist


def save_model(model, info_dict):
    if info_dict["train_engine"] == "deepspeed":
        model.save_checkpoint(save_dir=info_dict["model_dir"], tag=info_dict["tag"], client_state=info_dict)
    dist.barrier()


def batch_forward(model, batch, info_dict):
    info_dict["loss"] = model(batch)
    return info_dict


def batch_backward(model, info_dict):
    if info_dict.get("train_engine", "torch_ddp") == "deepspeed":
        model.backward(info_dict["loss"])
    else:
        info_dict["loss"].backward()
    return info_dict


class Executor:
    def __init__(self) -> None:
        self.step = 0

    def train(self, model, loader, configs):
        info_dict = copy.deepcopy(configs)
        for batch_idx, batch in enumerate(loader):
            info_dict["step"] = self.step
            info_dict["batch_idx"] = batch_idx
            info_dict = batch_forward(model, batch, info_dict)
            info_dict = batch_backward(model, info_dict)
            if self.step % info_dict["save_interval"] == 0:
                info_dict.update({"tag": f"step_{self.step}", "loss_dict": {"loss": info_dict["loss"]}})
                save_model(model, info_dict)
            self.step += 1

    def end_epoch(self, model, epoch, loss_dict, configs):
        info_dict = {"epoch": epoch, "step": self.step, "tag": f"epoch_{epoch}", "loss_dict": loss_dict, **configs}
        save_model(model, info_dict)


def main(configs, model, dataset):
    import deepspeed
    from torch.utils.data import DataLoader, DistributedSampler

    deepspeed.init_distributed(dist_backend="gloo", timeout=__import__("datetime").timedelta(minutes=5))
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=configs["ds_config"])
    loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset), drop_last=True)
    executor = Executor()
    executor.train(engine, loader, configs)
    executor.end_epoch(engine, 0, {"loss": engine(dataset[dist.get_rank()])}, configs)
