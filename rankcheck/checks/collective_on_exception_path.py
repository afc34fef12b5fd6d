"""RC105 collective-on-exception-path: an `except` that swallows an error raised around a
collective (the failing rank goes on, the others wait in the collective), and collectives that run
only inside an `except` handler (only the ranks that failed issue them)."""

from __future__ import annotations

from typing import Iterator

from rankcheck.driver.analysis import Analysis
from rankcheck.checks.evidence import describe_chain
from rankcheck.ftypes import Finding
from rankcheck.interp.interpreter import tree_reaches
from rankcheck.rules_meta import get_rule
from rankcheck.sequences.compare import first_collective, own_nodes

CODE = "RC105"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    for _, result in sorted(analysis.results.items()):
        for node in own_nodes(result.tree):
            if node[0] != "try":
                continue
            _, body, handlers, _orelse, _final, info = node
            body_event = first_collective(body) if tree_reaches(body) else None
            for handler_tree, (head, location, swallows) in zip(handlers, info):
                if body_event is not None and swallows:
                    _, collective = describe_chain(body_event.chain)
                    yield Finding(
                        code=CODE,
                        message=rule.message.format(
                            detail=f"`{head}` swallows an error that may be raised on one rank only inside a `try` "
                            f"that issues {collective} (line {body_event.site.location.line}); that rank carries on "
                            "while the others wait in the collective. Re-raise, or agree on failure with a collective"
                        ),
                        location=location,
                        severity=rule.severity,
                        chain=body_event.chain,
                        collective=body_event.op,
                    )
                handler_event = first_collective(handler_tree) if tree_reaches(handler_tree) else None
                if handler_event is not None:
                    callee, collective = describe_chain(handler_event.chain)
                    yield Finding(
                        code=CODE,
                        message=rule.message.format(
                            detail=f"{callee} runs only inside `{head}`, on the ranks where the error occurred; "
                            f"the other ranks never enter {collective if len(handler_event.chain) > 1 else 'it'} "
                            "and the job hangs"
                        ),
                        location=handler_event.site.location,
                        severity=rule.severity,
                        chain=handler_event.chain,
                        collective=handler_event.op,
                    )
