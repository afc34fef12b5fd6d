"""Rank 0 broadcasts each parameter of a full state dict and the others receive into empty tensors,
one broadcast per parameter on both sides: the two loops pair up. Only rank 0 can raise in the
middle of its loop (a key missing from the full state dict), leaving the others in a broadcast:
that is the one hazard here. The two arms' loops must not be reported as mismatched collectives
(accelerate's fsdp_utils.fsdp2_load_full_state_dict has this shape)."""
import torch
import torch.distributed as dist


def load_full_state_dict(full_sd, meta_sd):
    loaded = {}
    if dist.get_rank() == 0:
        for name, meta in meta_sd.items():
            if name not in full_sd:
                raise KeyError(f"{name} missing from the full state dict")  # expect: RC108
            tensor = full_sd[name].detach()
            dist.broadcast(tensor, src=0)
            loaded[name] = tensor
    else:
        for name, meta in meta_sd.items():
            tensor = torch.empty(meta.size(), dtype=meta.dtype)
            dist.broadcast(tensor, src=0)
            loaded[name] = tensor
    return loaded
