"""Rank side: run GPU code on CPU where that is a drop-in substitution, and say so.

`.cuda()`, `.to("cuda")`, `device="cuda"` and `torch.cuda.set_device(...)` only choose where the
tensors live; the collectives, and so the hang, are the same on CPU. Anything deeper (CUDA streams,
kernels, NCCL-only options) is not substituted: the replay fails there and the verdict says
"unsupported" instead of guessing. (The backend itself is swapped in instrument.py, beside
init_process_group.)
"""

from __future__ import annotations

import os
from typing import Any, Callable

import torch
from torch.overrides import TorchFunctionMode

_MOVE_METHODS = {torch.Tensor.to}
_SELF_METHODS = {torch.Tensor.cuda, torch.Tensor.pin_memory}


def _is_cuda(device: Any) -> bool:
    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device.startswith("cuda")
    return False


class CudaToCpu(TorchFunctionMode):
    """Rewrites every CUDA device argument of a torch call to CPU."""

    def __init__(self, note: Callable[[str], None]) -> None:
        super().__init__()
        self._note = note

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _SELF_METHODS:
            self._note("Tensor.cuda()/pin_memory() kept on CPU")
            return args[0]
        if _is_cuda(kwargs.get("device")):
            kwargs = dict(kwargs, device="cpu")
            self._note('device="cuda" replaced by "cpu"')
        if func in _MOVE_METHODS and len(args) > 1:
            target = args[1]
            if _is_cuda(target) or (isinstance(target, int) and not isinstance(target, bool)):
                args = (args[0], "cpu", *args[2:])
                self._note('.to("cuda") replaced by .to("cpu")')
        return func(*args, **kwargs)


def _local_world_size() -> int:
    return int(os.environ.get("LOCAL_WORLD_SIZE", os.environ.get("WORLD_SIZE", "1")))


def install(note: Callable[[str], None], rewrite_devices: bool = True) -> None:
    """Make device placement a no-op on this CPU rank (kept active for the whole replay).

    `rewrite_devices` pushes the torch-function mode that rewrites `device=` arguments; it costs
    a few microseconds per torch call, so the launcher asks for it only when the code mentions
    CUDA at all.
    """
    decode_objects_without_numpy(note)
    if torch.cuda.is_available():
        return  # real GPUs: nothing to stand in for (the backend is still gloo)
    if rewrite_devices:
        CudaToCpu(note).__enter__()

    def set_device(device: Any) -> None:
        note("torch.cuda.set_device() ignored (CPU replay)")

    def synchronize(device: Any = None) -> None:
        return None

    def device_count() -> int:
        note("torch.cuda.device_count() reported as the local world size (CPU replay)")
        return _local_world_size()

    def current_device() -> int:
        return int(os.environ.get("LOCAL_RANK", "0"))

    torch.cuda.set_device = set_device
    torch.cuda.synchronize = synchronize
    torch.cuda.device_count = device_count
    torch.cuda.current_device = current_device
    _module_cuda_to_self(note)


def decode_objects_without_numpy(note: Callable[[str], None]) -> None:
    """torch decodes the object collectives (broadcast_object_list, all_gather_object, ...) with
    `tensor.numpy()`; when numpy is not installed, decode the same bytes without it, so a
    replay environment without numpy does not turn every object collective into an error."""
    try:
        import numpy  # noqa: F401

        return
    except ImportError:
        pass
    import io
    import pickle

    import torch.distributed.distributed_c10d as c10d

    unpickler = getattr(c10d, "_unpickler", pickle.Unpickler)

    def _tensor_to_object(tensor, tensor_size, group):
        note("object collectives decoded without numpy (numpy is not installed)")
        data = bytes(tensor.cpu()[: int(tensor_size)].tolist())
        return unpickler(io.BytesIO(data)).load()

    if hasattr(c10d, "_tensor_to_object"):
        c10d._tensor_to_object = _tensor_to_object


def _module_cuda_to_self(note: Callable[[str], None]) -> None:
    module = torch.nn.Module

    def cuda(self, device: Any = None):
        note("Module.cuda() kept on CPU")
        return self

    setattr(module, "cuda", cuda)  # noqa: B010 - replacing the method is the point


# Messages of the errors that mean "this needs a real GPU": the replay is then unsupported.
GPU_ONLY_MARKERS = (
    "not compiled with cuda",
    "cuda driver",
    "no cuda gpus",
    "nvidia driver",
    "nccl",
    "cuda error",
    "cuda is not available",
    "torch.cuda.",
    "cudnn",
)


def needs_gpu(error_type: str, message: str, innermost_path: str = "") -> bool:
    text = f"{error_type}: {message}".lower()
    if any(marker in text for marker in GPU_ONLY_MARKERS):
        return True
    return f"{os.sep}torch{os.sep}cuda{os.sep}" in innermost_path
