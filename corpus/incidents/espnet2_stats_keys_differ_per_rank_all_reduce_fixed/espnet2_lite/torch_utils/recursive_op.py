"""espnet2/torch_utils/recursive_op.py with the fix proposed in espnet#2545: the stats dict is
gathered once with `all_gather_list` (a single collective whatever its keys) and averaged per key
over the ranks that reported it."""
import pickle

import torch
import torch.distributed as dist


def all_gather_list(data, max_size=65000):
    """Gathers arbitrary picklable data from all ranks with one all_gather of a fixed-size byte
    buffer (after fairseq.distributed_utils.all_gather_list)."""
    world_size = dist.get_world_size()
    device = torch.device("cuda", torch.cuda.current_device())
    enc = pickle.dumps(data)
    enc_size = len(enc)
    if enc_size + 4 > max_size:
        raise ValueError(f"encoded data exceeds max_size: {enc_size + 4}")
    buffer = torch.zeros(max_size, dtype=torch.uint8, device=device)
    buffer[:4] = torch.tensor(list(enc_size.to_bytes(4, "big")), dtype=torch.uint8)
    buffer[4 : enc_size + 4] = torch.tensor(list(enc), dtype=torch.uint8)
    out = [torch.zeros_like(buffer) for _ in range(world_size)]
    dist.all_gather(out, buffer)
    result = []
    for buf in out:
        buf = buf.cpu()
        size = int.from_bytes(bytes(buf[:4].tolist()), "big")
        result.append(pickle.loads(bytes(buf[4 : size + 4].tolist())))
    return result


def recursive_sum(obj, weight: torch.Tensor):
    """Local weighted sum only; no collective."""
    if isinstance(obj, (tuple, list)):
        return type(obj)(recursive_sum(v, weight) for v in obj)
    elif isinstance(obj, dict):
        return {k: recursive_sum(v, weight) for k, v in obj.items()}
    elif isinstance(obj, torch.Tensor):
        return (obj * weight.type(obj.dtype)).sum()
    elif obj is None:
        return None
    else:
        raise ValueError(type(obj))


def recursive_average(obj, weight: torch.Tensor, distributed: bool = False):
    local = {k: float(v) for k, v in recursive_sum(obj, weight).items() if v is not None}
    local_weight = float(weight.sum())
    if not distributed:
        return {k: torch.tensor(v / local_weight) for k, v in local.items()}, torch.tensor(local_weight)
    gathered = all_gather_list((local, local_weight))
    total_weight = sum(w for _, w in gathered)
    sums, weights = {}, {}
    for stats, w in gathered:
        for k, v in stats.items():
            sums[k] = sums.get(k, 0.0) + v
            weights[k] = weights.get(k, 0.0) + w
    averaged = {k: torch.tensor(sums[k] / weights[k]) for k in sums}
    return averaged, torch.tensor(total_weight, device=weight.device)
