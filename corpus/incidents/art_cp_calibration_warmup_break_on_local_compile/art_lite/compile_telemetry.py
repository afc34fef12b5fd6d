"""Per-process torch.compile telemetry: counts the graphs Dynamo has compiled in this process, so
a caller can tell whether a forward it just ran triggered a (re)compilation."""
from torch._dynamo.utils import counters


def compiled_graphs() -> int:
    return int(counters["stats"]["unique_graphs"])


class CompileWatch:
    """`with CompileWatch() as w: ...; w.compiled` -> did this process compile anything inside."""

    def __enter__(self):
        self._before = compiled_graphs()
        self.compiled = False
        return self

    def __exit__(self, *exc):
        self.compiled = compiled_graphs() > self._before
        return False
