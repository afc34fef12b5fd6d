"""Process-group helpers (maskrcnn-benchmark style)."""
import pickle

import torch
import torch.distributed as dist


def get_world_size():
    if not dist.is_available() or not dist.is_initialized():
        return 1
    return dist.get_world_size()


def get_rank():
    if not dist.is_available() or not dist.is_initialized():
        return 0
    return dist.get_rank()


def is_main_process():
    return get_rank() == 0


def synchronize():
    if get_world_size() == 1:
        return
    dist.barrier()


def all_gather(data):
    """Gather arbitrary picklable data from every rank (sizes first, then padded byte tensors)."""
    world_size = get_world_size()
    if world_size == 1:
        return [data]
    storage = torch.ByteStorage.from_buffer(pickle.dumps(data))
    tensor = torch.ByteTensor(storage).to("cuda")
    local_size = torch.LongTensor([tensor.numel()]).to("cuda")
    size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]
    dist.all_gather(size_list, local_size)
    sizes = [int(s.item()) for s in size_list]
    max_size = max(sizes)
    tensor_list = [torch.ByteTensor(size=(max_size,)).to("cuda") for _ in sizes]
    if tensor.numel() != max_size:
        tensor = torch.cat((tensor, torch.ByteTensor(size=(max_size - tensor.numel(),)).to("cuda")), dim=0)
    dist.all_gather(tensor_list, tensor)
    return [pickle.loads(t.cpu().numpy().tobytes()[:s]) for s, t in zip(sizes, tensor_list)]
