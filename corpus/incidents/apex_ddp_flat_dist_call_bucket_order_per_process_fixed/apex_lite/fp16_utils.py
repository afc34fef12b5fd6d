"""fp16 helpers of the 2018 apex (apex/fp16_utils/fp16util.py): convert a network to half precision
but keep batch-norm layers in float32, and keep float32 master copies of the parameters for the
optimizer step."""
import torch
import torch.nn as nn
from torch._utils import _flatten_dense_tensors


class tofp16(nn.Module):
    """Casts the network input to half precision."""

    def forward(self, input):
        return input.half()


def BN_convert_float(module):
    """Batch norm is numerically unstable in half precision: put its parameters and running stats
    back in float32 (cudnn accepts a half input with float32 batch-norm parameters)."""
    if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
        module.float()
    for child in module.children():
        BN_convert_float(child)
    return module


def network_to_half(network):
    return nn.Sequential(tofp16(), BN_convert_float(network.half()))


def prep_param_lists(model):
    model_params = [param for param in model.parameters() if param.requires_grad]
    master_params = [param.detach().clone().float() for param in model_params]
    for param in master_params:
        param.requires_grad = True
    return model_params, master_params


def model_grads_to_master_grads(model_params, master_params):
    for model, master in zip(model_params, master_params):
        if model.grad is None:
            continue
        if master.grad is None:
            master.grad = torch.empty_like(master)
        master.grad.data.copy_(model.grad.data)


def master_params_to_model_params(model_params, master_params):
    for model, master in zip(model_params, master_params):
        model.data.copy_(master.data)


def flat_master_norm(master_params):
    grads = [p.grad.data for p in master_params if p.grad is not None]
    return _flatten_dense_tensors(grads).norm().item() if grads else 0.0


__all__ = [
    "network_to_half",
    "prep_param_lists",
    "model_grads_to_master_grads",
    "master_params_to_model_params",
    "flat_master_norm",
]
