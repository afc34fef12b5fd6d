"""RC101 collective-under-rank-branch: a call that reaches a collective runs only on the ranks that
take a rank-dependent branch, and the other ranks issue a different sequence of collectives."""

from __future__ import annotations

from typing import Iterator

from rankcheck.checks.classify import claim
from rankcheck.checks.evidence import (
    condition_phrase,
    describe_chain,
    guard_evidence,
    reaches_through,
    sequence_evidence,
    severity_for,
)
from rankcheck.driver.analysis import Analysis
from rankcheck.ftypes import Finding
from rankcheck.rules_meta import get_rule

CODE = "RC101"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    for qual, divs in analysis.divergences.items():
        for div in divs:
            if claim(analysis, qual, div) != CODE:
                continue
            event = div.event
            callee, collective = describe_chain(event.chain)
            # A helper that calls what its caller handed it under its own rank test (`run_on_main`).
            variant = "handed" if div.guard.runs_callers_callable else "through" if reaches_through(event.chain) else "direct"
            assert event.site is not None
            yield Finding(
                code=CODE,
                message=rule.render(variant, callee=callee, condition=condition_phrase(div.guard, div.arm), collective=collective),
                location=event.site.location,
                severity=severity_for(div.guard.kind, rule.severity),
                guard=guard_evidence(div.guard),
                chain=event.chain,
                collective=event.op,
                sequences=sequence_evidence(div),
            )
