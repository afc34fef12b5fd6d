"""Every replica steps the optimizer; the master-ordinal branch only prints (no collective)."""
import torch
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def train_step(model, optimizer, batch, step: int):
    data, target = batch
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(data), target)
    loss.backward()
    xm.optimizer_step(optimizer)
    if xm.is_master_ordinal() and step % 100 == 0:
        print(f"[ordinal {xr.global_ordinal()}] step {step}")
    return loss
