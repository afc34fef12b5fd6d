"""RC105 collective-on-exception-path: an `except` that swallows an error raised around a
collective (the failing rank goes on, the others wait in the collective), and collectives that run
only inside an `except` handler (only the ranks that failed issue them)."""

from __future__ import annotations

from typing import Iterator

from rankcheck.checks.evidence import describe_chain, reaches_through
from rankcheck.driver.analysis import Analysis
from rankcheck.ftypes import Finding
from rankcheck.interp.tree import Try, own_nodes, tree_reaches
from rankcheck.rules_meta import get_rule
from rankcheck.sequences.flatten import first_collective

CODE = "RC105"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    for _, result in sorted(analysis.results.items()):
        for node in own_nodes(result.tree):
            if not isinstance(node, Try):
                continue
            # `try: dist.barrier()` with nothing before it that can fail: a rank that raises
            # there has skipped no collective of the body (the collective failed on its own).
            body_event = first_collective(node.body) if tree_reaches(node.body) and not node.collectives_first else None
            for handler in node.handlers:
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
