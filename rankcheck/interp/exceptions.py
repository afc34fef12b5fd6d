"""Which `except` clause catches which exception: a rank that raises goes on (and skips the
collectives the others wait in) only where a handler catches what it raised.

An exception is named by its lineage, the names of its class and of every class it derives from:
Python's own exceptions by their names (`AssertionError`, `Exception`, `BaseException`, from the
running interpreter's class hierarchy), project classes by qualified name through their bases, and
a library's exception by its dotted name, taken to derive from `Exception` as library exceptions
do. A handler catches an exception when it names one of those; a bare `except:` catches all that
can be caught. `os._exit()` raises nothing: no handler catches it.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, FrozenSet, Optional, Set, Tuple

if TYPE_CHECKING:
    from rankcheck.program.link import Program

# What a handler of these catches when what was raised is not known (`raise err`, a re-raise).
BROAD_HANDLERS: FrozenSet[str] = frozenset({"Exception", "BaseException"})
# Exceptions that code raises on purpose, not the runtime on this rank's data (as it raises an
# out-of-memory, an I/O error, a KeyError): a failed import is the same on every rank of one
# environment, and what a handler naming only these catches are the raises the analysis sees
# (`assert` on per-rank data is one). A project's own exception classes are raised by code too
# (the check takes them as these: checks/collective_on_exception_path.py); a raise the tree does
# not show (in a hook a library calls back) is then not followed. Python raises FloatingPointError
# itself nowhere (numpy does only under `seterr(all="raise")`; torch never): what raises it is a
# NaN check written in code (fairseq's loss scaler, `_check_grad_norms`). OverflowError is what
# fp16 loss scalers raise when the (all-reduced) gradient norm overflows at the minimum scale
# (fairseq's and metaseq's DynamicLossScaler); Python raises it only on a number too large for a
# float or a C integer (`math.exp(eval_loss)` of a perplexity, after the loss was reduced), and
# torch raises RuntimeError for those.
RAISED_ONLY_BY_CODE: FrozenSet[str] = frozenset({"ImportError", "ModuleNotFoundError", "NotImplementedError", "AssertionError",
                                                 "FloatingPointError", "OverflowError"})
# Raised on every rank together: Ctrl-C reaches the whole foreground process group, torchrun and
# every rank it started ("KeyboardInterrupt, which every rank receives", Lightning#6842). A
# handler naming only these and those above is per-rank only where the body raises one itself.
RAISED_ON_EVERY_RANK: FrozenSet[str] = frozenset({"KeyboardInterrupt"})
ASSERTION = "AssertionError"
SYSTEM_EXIT = "SystemExit"
UNCATCHABLE: Tuple[str, ...] = ()  # os._exit(): the process is gone


def caught_only_from_code(catches: Optional[Tuple[str, ...]]) -> bool:
    """A handler naming only exceptions that code raises on purpose or every rank gets together:
    what the runtime raises on one rank by itself does not enter it."""
    return catches is not None and all(c in RAISED_ONLY_BY_CODE or c in RAISED_ON_EVERY_RANK for c in catches)


def builtin_lineage(name: str) -> Optional[Tuple[str, ...]]:
    """`KeyError` -> (KeyError, LookupError, Exception, BaseException); None if not a builtin
    exception."""
    cls = getattr(builtins, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        return None
    return tuple(c.__name__ for c in cls.__mro__ if c is not object)


def lineage(program: Program, name: str) -> Tuple[str, ...]:
    """The names an exception of class `name` (a builtin's name, a project or library qualname) is
    caught by."""
    found: list[str] = []
    seen: Set[str] = set()

    def walk(qual: str) -> None:
        if qual in seen:
            return
        seen.add(qual)
        own = builtin_lineage(qual)
        if own is not None:
            found.extend(own)
            return
        found.append(qual)
        cls = program.classes.get(qual)
        if cls is None:
            short = qual.rsplit(".", 1)[-1]
            if short != qual and builtin_lineage(short) is not None:
                found.extend(builtin_lineage(short) or ())  # `builtins.ValueError`
            else:
                found.extend(("Exception", "BaseException"))  # a library's exception
            return
        for base in cls.bases:
            target = program.resolve(base)
            walk(target.qualname if target.kind == "class" else base)

    walk(name)
    return tuple(dict.fromkeys(found))


def handler_catches(catches: Optional[Tuple[str, ...]], raises: Optional[Tuple[str, ...]]) -> bool:
    """Whether a handler that names `catches` (None: a bare `except:`) catches an exception of the
    lineage `raises` (None: not known)."""
    if raises == UNCATCHABLE:
        return False
    if catches is None:
        return True
    if raises is None:
        return bool(BROAD_HANDLERS.intersection(catches))
    return not set(catches).isdisjoint(raises)
