"""Trimmed fairseq/distributed_utils.py (2019): process-group setup and `all_gather_list`, which
gathers arbitrary picklable data by all-reducing one byte buffer sliced per rank."""
import pickle

import torch
import torch.distributed as dist


def distributed_init(args):
    dist.init_process_group(backend=args.distributed_backend, init_method=args.distributed_init_method,
                            world_size=args.distributed_world_size, rank=args.distributed_rank)
    args.distributed_rank = dist.get_rank()
    return args.distributed_rank


def is_master(args):
    return args.distributed_rank == 0


def get_rank():
    return dist.get_rank()


def get_world_size():
    return dist.get_world_size()


def all_reduce(tensor, group=None):
    if group is None:
        group = dist.group.WORLD
    return dist.all_reduce(tensor, group=group)


def all_gather_list(data, group=None, max_size=16384):
    rank = get_rank()
    world_size = get_world_size()
    buffer_size = max_size * world_size
    if not hasattr(all_gather_list, "_buffer") or all_gather_list._buffer.numel() < buffer_size:
        all_gather_list._buffer = torch.cuda.ByteTensor(buffer_size)
        all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory()
    buffer = all_gather_list._buffer
    buffer.zero_()
    cpu_buffer = all_gather_list._cpu_buffer

    enc = pickle.dumps(data)
    enc_size = len(enc)
    if enc_size + 2 > max_size:
        raise ValueError("encoded data exceeds max_size: {}".format(enc_size + 2))
    cpu_buffer[0] = enc_size // 255
    cpu_buffer[1] = enc_size % 255
    cpu_buffer[2:enc_size + 2] = torch.ByteTensor(list(enc))
    start = rank * max_size
    buffer[start:start + enc_size + 2].copy_(cpu_buffer[:enc_size + 2])

    all_reduce(buffer, group=group)

    try:
        result = []
        for i in range(world_size):
            out_buffer = buffer[i * max_size:(i + 1) * max_size]
            size = 255 * int(out_buffer[0].item()) + int(out_buffer[1].item())
            if size > 0:
                result.append(pickle.loads(bytes(out_buffer[2:size + 2].tolist())))
        return result
    except pickle.UnpicklingError:
        raise Exception(
            "Unable to unpickle data from other workers. all_gather_list requires all "
            "workers to enter the function together, so this error usually indicates "
            "that the workers have fallen out of sync somehow."
        )
