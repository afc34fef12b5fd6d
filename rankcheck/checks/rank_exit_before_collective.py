"""RC102 rank-exit-before-collective: a return/continue/break/exit taken only on some ranks, or a
raise they survive (caught by their own code or a caller's), skips a collective that the other
ranks go on to issue. A raise nothing catches is RC108's (the rank dies)."""

from __future__ import annotations

from typing import Iterator

from rankcheck.checks.classify import catch_of, claim
from rankcheck.checks.evidence import (
    condition_phrase,
    describe_chain,
    guard_evidence,
    reaches_through,
    sequence_evidence,
    severity_for,
    skipped_after,
)
from rankcheck.driver.analysis import Analysis
from rankcheck.ftypes import Finding
from rankcheck.rules_meta import get_rule

CODE = "RC102"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    for qual, divs in analysis.divergences.items():
        for div in divs:
            if claim(analysis, qual, div) != CODE or div.exit_event is None:
                continue
            exit_site = div.exit_event.site
            skipped = div.event
            assert exit_site is not None and skipped.site is not None
            way, skipped_line = skipped_after(skipped, div.exit_event)
            callee, collective = describe_chain(way)
            catch = catch_of(analysis, qual, div)
            fields = dict(
                exit=exit_site.text,
                condition=condition_phrase(div.guard, div.arm),
                callee=callee,
                skipped_line=skipped_line,
                collective=collective if reaches_through(way) else "it",
            )
            if catch is not None:
                where = f"line {catch.location.line}" if catch.location.path == exit_site.location.path else f"{catch.location.path}:{catch.location.line}"
                message = rule.render("caught", handler=catch.head, handler_at=where, **fields)
            else:
                message = rule.render("through" if reaches_through(way) else "direct", **fields)
            yield Finding(
                code=CODE,
                message=message,
                location=exit_site.location,
                severity=severity_for(div.guard.kind, rule.severity),
                guard=guard_evidence(div.guard),
                chain=skipped.chain,
                collective=skipped.op,
                sequences=sequence_evidence(div),
            )
