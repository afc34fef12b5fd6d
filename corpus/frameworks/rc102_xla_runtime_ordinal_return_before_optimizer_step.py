"""torch_xla.runtime ordinals: a debug path returns on every replica but global ordinal 0 after the
forward, skipping xm.optimizer_step, whose gradient all-reduce ordinal 0 then runs alone."""
import torch
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def train_step(model, optimizer, batch, debug_only_first: bool):
    data, target = batch
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(data), target)
    loss.backward()
    if debug_only_first and xr.global_ordinal() != 0:
        return loss  # expect: RC102
    xm.optimizer_step(optimizer)
    return loss
