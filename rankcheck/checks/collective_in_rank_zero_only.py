"""RC107 collective-in-rank-zero-only: a function that runs only on rank 0 (decorated with
`@rank_zero_only` or an equivalent from the catalog or configuration) issues a collective."""

from __future__ import annotations

from typing import Iterator

from rankcheck.driver.analysis import Analysis
from rankcheck.checks.evidence import describe_chain
from rankcheck.ftypes import RANK_IDENTITY, Finding, Guard, Location
from rankcheck.rules_meta import get_rule
from rankcheck.sequences.compare import first_collective

CODE = "RC107"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    interp = analysis.interpreter
    for qual in sorted(analysis.reaching):
        fn = analysis.program.functions[qual]
        if not interp.is_rank_zero_only(fn):
            continue
        event = first_collective(interp.run(qual).tree)
        if event is None:
            continue
        reason = interp.rank_zero_reason(fn)
        path = analysis.program.path_of_function[qual]
        where = Location(path, fn.span.line, fn.span.column, fn.span.end_line, fn.span.end_column)
        _, collective = describe_chain(event.chain)
        yield Finding(
            code=CODE,
            message=rule.message.format(function=fn.name, reason=reason, collective=collective),
            location=where,
            severity=rule.severity,
            guard=Guard(location=where, text=reason, condition="rank == 0", kind=RANK_IDENTITY),
            chain=event.chain,
            collective=event.op,
        )
