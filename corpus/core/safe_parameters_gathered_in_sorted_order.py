"""The look-alike of rc104_parameters_gathered_in_set_order.py (RLinf#1355 fixed): the names are
sorted once when the sender is set up, so every rank walks them, and gathers the parameters, in
one order. Sets of integers (`set(range(n))`) iterate alike too: integers hash to themselves."""
from torch.distributed.tensor import DTensor


def materialize_tensor(tensor):
    if isinstance(tensor, DTensor):
        return tensor.full_tensor()
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
        self.param_names_need_sync = sorted(set(param_names))

    def sync(self, state_dict, send):
        def named_items():
            for name in self.param_names_need_sync:
                value = state_dict.get(name)
                if value is None:
                    continue
                yield name, value

        for bucket in iter_buckets(named_items(), self.bucket_size):
            send(bucket)


def gather_layers(state_dict, num_layers: int):
    return [materialize_tensor(state_dict[index]) for index in set(range(num_layers))]
