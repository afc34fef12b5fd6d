"""RLinf-shaped weight sync: the names of the parameters to send are kept as a set, and every
sync walks it, materialising each DTensor (`full_tensor()`, an all-gather over the FSDP mesh) in
buckets planned in the order the names come. A set of strings iterates in the order of their
hashes, which Python salts per process: at one step the ranks gather different parameters.
(The look-alike, safe_parameters_gathered_in_sorted_order.py, sorts the names first.)"""
from torch.distributed.tensor import DTensor


def materialize_tensor(tensor):
    if isinstance(tensor, DTensor):
        return tensor.full_tensor()  # expect: RC104
    return tensor


def iter_buckets(items, bucket_size: int):
    plan, current, held = [], [], 0
    for key, value in items:
        current.append((key, value))
        held += value.numel()
        if held >= bucket_size:
            plan.append(current)
            current, held = [], 0
    if current:
        plan.append(current)
    for bucket_items in plan:
        yield {key: materialize_tensor(value) for key, value in bucket_items}


class BucketWeightSyncer:
    def __init__(self, bucket_size: int) -> None:
        self.bucket_size = bucket_size
        self.param_names_need_sync = None

    def init_sender(self, param_names):
        self.param_names_need_sync = set(param_names)

    def sync(self, state_dict, send):
        def named_items():
            for name in self.param_names_need_sync:
                value = state_dict.get(name)
                if value is None:
                    continue
                yield name, value

        for bucket in iter_buckets(named_items(), self.bucket_size):
            send(bucket)
