"""Trimmed copy of accelerate.utils.fsdp_utils (FSDP2 preparation and rank-0 full-state-dict
loading) as it stood before huggingface/accelerate#3982."""
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor import distribute_tensor


def _infer_parameter_dtype(model, param_name, empty_param):
    try:
        old_param = model.get_parameter_or_buffer(param_name)
    except AttributeError:
        base, local = param_name.rsplit(".", 1)
        old_param = getattr(model.get_submodule(base), local)
    is_torch_e4m3fn_available = hasattr(torch, "float8_e4m3fn")
    casting_dtype = None
    is_param_float8_e4m3fn = is_torch_e4m3fn_available and empty_param.dtype == torch.float8_e4m3fn
    if empty_param.dtype.is_floating_point and not is_param_float8_e4m3fn:
        casting_dtype = old_param.dtype
    return old_param is not None and old_param.is_contiguous(), casting_dtype


def _cast_and_contiguous(tensor, to_contiguous, dtype):
    if dtype is not None:
        tensor = tensor.to(dtype=dtype)
    if to_contiguous:
        tensor = tensor.contiguous()
    return tensor


def fsdp2_load_full_state_dict(accelerator, model, full_sd, cpu_offload=False):
    """Loads the full state dict (present on rank 0 only) into the sharded model by broadcasting
    every tensor from rank 0 and sharding it on each rank."""
    meta_sharded_sd = model.state_dict()
    sharded_sd = {}

    if accelerator.is_main_process:
        for (param_name, full_param), sharded_param in zip(full_sd.items(), meta_sharded_sd.values()):
            device_mesh = sharded_param.device_mesh
            full_param = full_param.detach().to(device_mesh.device_type)
            dist.broadcast(full_param, src=0, group=dist.group.WORLD)  # expect: RC104
            sharded_tensor = distribute_tensor(full_param, device_mesh, sharded_param.placements)
            to_contiguous, casting_dtype = _infer_parameter_dtype(model, param_name, full_param)
            sharded_tensor = _cast_and_contiguous(sharded_tensor, to_contiguous, casting_dtype)
            if cpu_offload:
                sharded_tensor = sharded_tensor.to("cpu")
            sharded_sd[param_name] = sharded_tensor
    # We need this else to have a matching `broadcast` for all of the ranks, else we deadlock
    else:
        for param_name, sharded_param in meta_sharded_sd.items():
            device_mesh = sharded_param.device_mesh
            full_tensor = torch.empty(sharded_param.size(), device=device_mesh.device_type, dtype=sharded_param.dtype)
            dist.broadcast(full_tensor, src=0, group=dist.group.WORLD)
            sharded_tensor = distribute_tensor(full_tensor, device_mesh, sharded_param.placements)
            to_contiguous, casting_dtype = _infer_parameter_dtype(model, param_name, full_tensor)
            sharded_tensor = _cast_and_contiguous(sharded_tensor, to_contiguous, casting_dtype)
            if cpu_offload:
                sharded_tensor = sharded_tensor.to("cpu")
            sharded_sd[param_name] = sharded_tensor

    model.load_state_dict(sharded_sd, assign=True)
    return model


def fsdp2_prepare_model(accelerator, model):
    """Shards every decoder layer and the root with `fully_shard`, then (with
    `cpu_ram_efficient_loading`) fills the shards from rank 0's full state dict."""
    fsdp2_plugin = accelerator.state.fsdp_plugin
    original_sd = model.state_dict()
    mesh = init_device_mesh("cuda", (accelerator.num_processes,))
    mp_policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    fsdp2_kwargs = {"mesh": mesh, "reshard_after_forward": True, "mp_policy": mp_policy}

    if fsdp2_plugin.cpu_ram_efficient_loading:
        model = model.to(torch.device("meta"))

    for module in model.modules():
        if module.__class__.__name__.endswith("DecoderLayer"):
            fully_shard(module, **fsdp2_kwargs)
    fully_shard(model, **fsdp2_kwargs)

    if fsdp2_plugin.cpu_ram_efficient_loading:
        fsdp2_load_full_state_dict(accelerator, model, original_sd, cpu_offload=False)
    model = model.to_empty(device=accelerator.device) if not fsdp2_plugin.cpu_ram_efficient_loading else model
    return model
