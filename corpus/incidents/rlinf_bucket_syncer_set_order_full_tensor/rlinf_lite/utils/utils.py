"""Trimmed rlinf/utils/utils.py."""
import torch
from torch.distributed.tensor import DTensor


def dtype_size(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def normalize_dtype(dtype):
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    return {"bf16": torch.bfloat16, "bfloat16": torch.bfloat16, "fp16": torch.float16,
            "float16": torch.float16, "fp32": torch.float32, "float32": torch.float32}[dtype]


def normalize_device(device) -> torch.device:
    if device is None:
        device = "cuda"
    return device if isinstance(device, torch.device) else torch.device(device)


def materialize_tensor(tensor: torch.Tensor | DTensor) -> torch.Tensor:
    """Turn a DTensor shard into the full dense tensor (an all-gather over its mesh)."""
    if isinstance(tensor, DTensor):
        return tensor.full_tensor()  # expect: RC104
    assert isinstance(tensor, torch.Tensor), "Expected a torch.Tensor or DTensor"
    return tensor


def collect_param_names_need_sync(module: torch.nn.Module) -> list[str]:
    """Names of the trainable parameters and persistent buffers that the rollout must receive."""
    names = [n for n, p in module.named_parameters(remove_duplicate=False) if p.requires_grad]
    for module_name, sub in module.named_modules(remove_duplicate=False):
        skip = getattr(sub, "_non_persistent_buffers_set", set())
        for buf_name, _ in sub.named_buffers(recurse=False, remove_duplicate=False):
            if buf_name not in skip:
                names.append(f"{module_name}.{buf_name}" if module_name else buf_name)
    return names
