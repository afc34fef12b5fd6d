"""Process-group getters in the shape of metaseq's distributed/utils.py: the global group is
created by the getter's first call and kept on the function (`get_global_group._global_group`),
the gloo group in a module global; `distributed_init` makes the first calls on every rank. A later
call under a rank test only reads the group. The look-alike makes a new group on every call."""
import torch.distributed as dist

_GLOO_GROUP = None


def get_global_group():
    if dist.is_initialized():
        if not hasattr(get_global_group, "_global_group"):
            get_global_group._global_group = dist.new_group(timeout=60)
        return get_global_group._global_group
    return None


def get_gloo_group():
    global _GLOO_GROUP
    if _GLOO_GROUP is None:
        _GLOO_GROUP = dist.new_group(backend="gloo", timeout=60)
    return _GLOO_GROUP


def fresh_gloo_group():
    return dist.new_group(backend="gloo", timeout=60)


def get_data_parallel_rank():
    return dist.get_rank(group=get_global_group())


def distributed_init():
    dist.init_process_group("gloo", timeout=60)
    get_global_group()
    get_gloo_group()

def save_checkpoint(state):
    if get_data_parallel_rank() == 0:
        print("saving", len(state))
    if dist.get_rank() == 0:
        group = get_gloo_group()
        print("gloo group", group)


def report(state):
    if dist.get_rank() == 0:
        group = fresh_gloo_group()  # expect: RC101
        print("gloo group", group)


def main():
    distributed_init()
    save_checkpoint({})
    report({})


if __name__ == "__main__":
    main()
