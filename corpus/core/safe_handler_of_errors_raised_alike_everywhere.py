"""Handlers that name only exceptions code raises on purpose, none of which the try raises on some
ranks only: Megatron's MIMO model providers load a checkpoint inside `try: ... except
(ModuleNotFoundError, AssertionError):` to run without megatron.training (the assert is on the
configuration); a plugin's optional import. Every rank raises alike, or none does. The
look-alikes (the same handlers around raises on per-rank data) are in
rc105_handler_of_errors_raised_on_this_ranks_data.py."""
import torch.distributed as dist


def load_language_model(model, path):
    try:
        from megatron.training import get_args

        args = get_args()
        assert args.load is not None
        dist.barrier()
    except (ModuleNotFoundError, AssertionError):
        return model
    return model


def maybe_compile(model, t):
    try:
        import apex  # noqa: F401

        dist.all_reduce(t)
    except ImportError:
        return model
    return model
