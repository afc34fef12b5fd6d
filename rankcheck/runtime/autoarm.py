"""Arming without a code change (`rankcheck run`): the injected sitecustomize installs this
import hook, which wraps `init_process_group` the moment torch.distributed defines it, so that
every process group the job initialises is armed right after it forms. Torch is never imported
here: processes that never use torch.distributed (the launcher's agent, tools) pay nothing."""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import sys
from typing import Any, Optional, Sequence

TARGET = "torch.distributed.distributed_c10d"


def _wrap(module: Any) -> None:
    original = module.init_process_group

    @functools.wraps(original)
    def init_process_group(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        from rankcheck.runtime.settings import from_env

        try:
            from_env()
        except (TypeError, ValueError) as exc:  # the same variables on every rank: none arms
            print(f"rankcheck: not arming: {exc}", file=sys.stderr, flush=True)
            return result
        from rankcheck.runtime.guard import arm

        # Not guarded: arming makes a group on NCCL jobs, and a rank that failed past that point
        # and went on unarmed would leave the others waiting in the collective.
        arm()
        return result

    module.init_process_group = init_process_group


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_module(self, spec: Any) -> Any:
        return self.inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.inner.exec_module(module)
        _wrap(module)  # before torch.distributed's `from .distributed_c10d import *` copies it


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Optional[Sequence[str]] = None, target: Any = None) -> Any:
        if name != TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader)
        return spec


def install() -> None:
    if TARGET in sys.modules:
        _wrap(sys.modules[TARGET])
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
