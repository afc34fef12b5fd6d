"""RC106 mismatched-collective-sequences: both arms of a rank-dependent branch issue collectives,
but different ones or in a different order (rank 0 broadcasts while the others all-reduce)."""

from __future__ import annotations

from typing import Iterator

from rankcheck.checks.classify import claim
from rankcheck.checks.evidence import (
    condition_phrase,
    describe_chain,
    guard_evidence,
    sequence_evidence,
    severity_for,
)
from rankcheck.driver.analysis import Analysis
from rankcheck.ftypes import Finding
from rankcheck.program.ir import GuardKeyword
from rankcheck.rules_meta import get_rule

CODE = "RC106"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    for qual, divs in analysis.divergences.items():
        reported = set()
        for div in divs:
            if claim(analysis, qual, div) != CODE or div.other_event is None:
                continue
            if div.guard.location in reported:
                continue  # one finding per branch, however many collectives differ in it
            reported.add(div.guard.location)
            mine, _ = describe_chain(div.event.chain)
            assert div.event.site is not None and div.other_event.site is not None
            if div.guard.keyword is GuardKeyword.WITH:
                # The others wait inside the context manager: name its barrier, not the `with`.
                _, theirs = describe_chain(div.other_event.chain)
                inner = div.other_event.chain[-1].location if div.other_event.chain else div.other_event.site.location
                variant, where = "staggered", {"their_where": f"{inner.path}:{inner.line}"}
            else:
                theirs, _ = describe_chain(div.other_event.chain)
                variant, where = "arms", {"their_line": str(div.other_event.site.location.line)}
                if div.rounds is not None:  # the same collectives, looped other numbers of times
                    variant = "rounds"
                    where.update(my_rounds=str(div.rounds[0]), their_rounds=str(div.rounds[1]))
            message = rule.render(
                variant,
                guard=div.guard.head.rstrip(":"),
                condition=condition_phrase(div.guard, div.arm),
                mine=mine,
                my_line=div.event.site.location.line,
                theirs=theirs,
                **where,
            )
            yield Finding(
                code=CODE,
                message=message,
                location=div.guard.location,
                severity=severity_for(div.guard.kind, rule.severity),
                guard=guard_evidence(div.guard),
                chain=div.event.chain,
                collective=div.event.op,
                sequences=sequence_evidence(div),
            )
