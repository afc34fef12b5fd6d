"""What the fixes know about calls, as tables: which calls only have rank-local effects (a log
line, a file written), which are pure, and which framework calls every rank must make.

A name here matches the last part of the called name (`logger.info` -> `info`) unless it holds a
dot, in which case it matches the called name's end (`torch.save`)."""

from __future__ import annotations

# Rank-local side effects: what a guard may keep inside once the collective has moved out. They
# neither communicate nor change what the other ranks compute.
SINK_CALLS = frozenset(
    {
        "print",
        "pprint",
        # logging and its look-alikes (logger.info, log.warning, logging.info, rank_zero_info, ...)
        "debug",
        "info",
        "warning",
        "warn",
        "error",
        "exception",
        "critical",
        "rank_zero_info",
        "rank_zero_warn",
        "print_rank_0",
        "log_dist",
        # experiment trackers and writers
        "wandb.log",
        "mlflow.log_metric",
        "mlflow.log_metrics",
        "add_scalar",
        "add_scalars",
        "add_histogram",
        "add_text",
        "add_image",
        "write",
        "writelines",
        "flush",
        "set_postfix",
        "set_description",
        "torch.save",
        "json.dump",
        "pickle.dump",
        "np.save",
        "numpy.save",
    }
)

# Calls without side effects, allowed in the arguments of a call that moves (evaluating them on
# more ranks, or earlier, changes nothing).
PURE_CALLS = frozenset(
    {
        "detach",
        "clone",
        "item",
        "float",
        "int",
        "len",
        "str",
        "mean",
        "sum",
        "cpu",
        "tolist",
        "os.path.join",
        "get_rank",
        "get_world_size",
        "get_local_rank",
    }
)

# Framework calls every rank must make (the catalog explains each one in the chain's note); the
# rank-0 work around them stays under the guard.
EVERY_RANK_FRAMEWORK_CALLS = frozenset(
    {
        "wait_for_everyone",
        "save_state",
        "save_checkpoint",
        "state_dict",
        "dcp.save",
        "checkpoint.save",
    }
)

# Names a fresh variable takes for the result of a call pulled out of an expression.
RESULT_NAMES = {"state_dict": "full_state_dict"}


def matches(called: str, table: frozenset) -> bool:
    """Whether the dotted called name is one of the table's names (see the module docstring)."""
    last = called.rsplit(".", 1)[-1]
    if last in table:
        return True
    return any("." in name and (called == name or called.endswith("." + name)) for name in table)
