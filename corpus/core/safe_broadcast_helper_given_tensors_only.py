"""Megatron-shaped scheduler: a nested helper broadcasts its argument when it is not None, and
every call passes a tensor: a count built with `torch.tensor`, a buffer that is this rank's tensor
where it has one and an empty one of the broadcast size where it has none. The `is not None` test
holds on every rank, whatever else differs. A second helper is given tensors in both arms of a rank branch, one of them moved
and converted on its way. (The look-alike passes None on some ranks.)"""
import torch
import torch.distributed as dist


def schedule(samples, is_first_tp_rank: bool):
    group = dist.new_group(backend="gloo", timeout=__import__("datetime").timedelta(minutes=5))

    def _broadcast(item):
        if item is not None:
            dist.broadcast(item, 0, group=group)

    def _broadcast_num_samples(num_samples):
        n = 0 if num_samples is None else int(num_samples.numel())
        n = torch.tensor([n], dtype=torch.int64)
        _broadcast(n)
        received = torch.empty(int(n.item()), dtype=torch.int32) if num_samples is None else num_samples
        _broadcast(received)
        return received

    return _broadcast_num_samples(samples if is_first_tp_rank else None)


def broadcast_tensor(item, src, group) -> None:
    if item is not None:
        dist.broadcast(item, src, group=group)


def broadcast_to_pipeline(samples, group):
    # Both arms hand the helper tensors (one moved and converted on its way): the same two
    # broadcasts on every rank.
    if dist.get_rank(group) == 0:
        payload = torch.cat([s.reshape(-1) for s in samples]).to(device="cpu", dtype=torch.float32)
        length = torch.tensor(payload.shape[0], dtype=torch.int32)
        broadcast_tensor(length, 0, group)
        broadcast_tensor(payload, 0, group)
    else:
        length = torch.tensor(0, dtype=torch.int32)
        broadcast_tensor(length, 0, group)
        payload = torch.empty(int(length.item()), dtype=torch.float32)
        broadcast_tensor(payload, 0, group)
    return payload


def main(samples):
    dist.init_process_group("gloo", timeout=__import__("datetime").timedelta(minutes=5))
    schedule(samples, dist.get_rank() == 0)
    broadcast_to_pipeline(samples, dist.new_group(backend="gloo", timeout=__import__("datetime").timedelta(minutes=5)))
