"""RC105 collective-on-exception-path: an `except` that swallows an error raised around a
collective (the failing rank goes on, the others wait in the collective), and collectives that run
only inside an `except` handler (only the ranks that failed issue them)."""

from __future__ import annotations

from typing import Container, FrozenSet, Iterator, Set, Tuple

from rankcheck.checks.evidence import describe_chain, reaches_through
from rankcheck.driver.analysis import Analysis
from rankcheck.ftypes import Finding
from rankcheck.interp.exceptions import caught_only_from_code, handler_catches
from rankcheck.interp.tree import Branch, Collective, Exit, ExitKind, Handler, Loop, Tree, Try, own_nodes, tree_reaches
from rankcheck.rules_meta import get_rule
from rankcheck.sequences.flatten import first_collective

CODE = "RC105"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    # What only code raises, or every rank at once: the project's classes, and what the
    # collectives that fail together raise (a `dcp.load` that failed on any rank fails on all).
    not_per_rank = set(analysis.program.classes) | analysis.program.catalog.raised_together
    for _, result in sorted(analysis.results.items()):
        for node in own_nodes(result.tree):
            if not isinstance(node, Try):
                continue
            # `try: dist.barrier()` with nothing before it that can fail: a rank that raises
            # there has skipped no collective of the body (the collective failed on its own).
            # What a failing rank skips, past the collectives that fail on every rank together.
            together = _failing_together(node.body)
            body_event = first_collective(node.body, together) if tree_reaches(node.body) and not node.collectives_first else None
            for handler in node.handlers:
                if not _may_catch_on_some_ranks(handler, node.body, not_per_rank):
                    continue
                if body_event is not None and body_event.site is not None and handler.swallows:
                    _, collective = describe_chain(body_event.chain)
                    yield Finding(
                        code=CODE,
                        message=rule.render("swallowed", handler=handler.head, collective=collective, line=body_event.site.location.line),
                        location=handler.location,
                        severity=rule.severity,
                        chain=body_event.chain,
                        collective=body_event.op,
                    )
                handler_event = first_collective(handler.body) if tree_reaches(handler.body) else None
                if handler_event is not None and handler_event.site is not None:
                    callee, collective = describe_chain(handler_event.chain)
                    yield Finding(
                        code=CODE,
                        message=rule.render(
                            "handler_only",
                            callee=callee,
                            handler=handler.head,
                            collective=collective if reaches_through(handler_event.chain) else "it",
                        ),
                        location=handler_event.site.location,
                        severity=rule.severity,
                        chain=handler_event.chain,
                        collective=handler_event.op,
                    )


def _failing_together(tree: Tree) -> FrozenSet[str]:
    """The ops of the collectives the tree reaches that raise a failure on every rank (a
    `torch.distributed.checkpoint.load`: CollectiveSpec.fails_together), and of no other: a
    handler around only those is entered by every rank or by none."""
    together: Set[str] = set()
    others: Set[str] = set()
    stack = [tree]
    while stack:
        for node in stack.pop():
            if isinstance(node, Collective):
                (together if node.fails_together else others).add(node.op)
            stack.extend(node.children())
    return frozenset(together - others)


def _may_catch_on_some_ranks(handler: Handler, body: Tree, not_per_rank: Container[str]) -> bool:
    """Whether what the handler catches can be raised on some ranks and not others. A handler of
    any exception the runtime raises may; one of only RAISED_ONLY_BY_CODE and RAISED_ON_EVERY_RANK
    does when the body raises one under a branch or loop that differs per rank (`assert` on
    per-rank data). `except ModuleNotFoundError:` around an optional import is alike on every
    rank, and so is `except KeyboardInterrupt:`. So is a handler of the project's own exception
    classes only: the runtime never raises those, the project's `raise` statements do (composer's
    `_OOMOnSomeRank`, raised on every rank after the ranks agreed that one ran out of memory), and
    a handler of what a collective that fails together raises (`except CheckpointException:`
    around `dcp.load`). `not_per_rank`: those classes, the project's and the catalog's."""
    if _raised_by_runtime(handler, not_per_rank):
        return True
    assert handler.catches is not None
    return _raises_caught(body, handler.catches, False, not_per_rank)


def _raised_by_runtime(handler: Handler, not_per_rank: Container[str]) -> bool:
    """The handler catches something the runtime raises on one rank by itself (an I/O error, a
    `StopIteration` of a loader that ran out), not only what code raises or every rank gets."""
    catches = handler.catches
    return catches is None or not all(caught_only_from_code((c,)) or c in not_per_rank for c in catches)


def _raises_caught(tree: Tree, catches: Tuple[str, ...], per_rank: bool, not_per_rank: Container[str]) -> bool:
    for node in tree:
        if isinstance(node, Exit) and node.kind is ExitKind.RAISE and per_rank:
            if node.raises is None or handler_catches(catches, node.raises):
                return True
        varies = per_rank or isinstance(node, Branch) or (isinstance(node, Loop) and node.formula is not None)
        if isinstance(node, Try):
            # what an inner handler of anything catches does not reach this one
            if _raises_caught(node.body, catches, varies, not_per_rank) and not any(handler_catches(h.catches, None) for h in node.handlers):
                return True
            # A handler of what the runtime raises on some ranks runs on those ranks only
            # (`except StopIteration: raise DataloaderExhaustedError()`).
            if any(_raises_caught(h.body, catches, varies or _raised_by_runtime(h, not_per_rank), not_per_rank) for h in node.handlers):
                return True
            if any(_raises_caught(part, catches, varies, not_per_rank) for part in (node.orelse, node.final)):
                return True
            continue
        if any(_raises_caught(child, catches, varies, not_per_rank) for child in node.children()):
            return True
    return False

