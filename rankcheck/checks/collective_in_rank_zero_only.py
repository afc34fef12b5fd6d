"""RC107 collective-in-rank-zero-only: a function that runs only on rank 0 (decorated with
`@rank_zero_only` or an equivalent from the catalog or configuration) issues a collective."""

from __future__ import annotations

from typing import Iterator

from rankcheck.checks.evidence import describe_chain
from rankcheck.driver.analysis import Analysis
from rankcheck.ftypes import RANK_IDENTITY, Finding, Guard, Location
from rankcheck.rules_meta import get_rule

CODE = "RC107"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    for qual, verdict in sorted(analysis.rank_zero_only.items()):
        fn = analysis.program.functions[qual]
        path = analysis.program.path_of_function[qual]
        where = Location(path, fn.span.line, fn.span.column, fn.span.end_line, fn.span.end_column)
        _, collective = describe_chain(verdict.event.chain)
        yield Finding(
            code=CODE,
            message=rule.render("reaches", function=fn.name, reason=verdict.reason, collective=collective),
            location=where,
            severity=rule.severity,
            guard=Guard(location=where, text=verdict.reason, condition="rank == 0", kind=RANK_IDENTITY),
            chain=verdict.event.chain,
            collective=verdict.event.op,
        )
