"""RC102 rank-exit-before-collective: a return/continue/break/raise/exit taken only on some ranks
skips a collective that the other ranks go on to issue."""

from __future__ import annotations

from typing import Iterator

from rankcheck.checks.classify import rule_for
from rankcheck.checks.evidence import (
    condition_phrase,
    describe_chain,
    guard_evidence,
    reaches_through,
    severity_for,
)
from rankcheck.driver.analysis import Analysis
from rankcheck.ftypes import Finding
from rankcheck.rules_meta import get_rule

CODE = "RC102"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    for divs in analysis.divergences.values():
        for div in divs:
            if rule_for(div) != CODE or div.exit_event is None:
                continue
            exit_site = div.exit_event.site
            skipped = div.event
            assert exit_site is not None and skipped.site is not None
            callee, collective = describe_chain(skipped.chain)
            message = rule.render(
                "through" if reaches_through(skipped.chain) else "direct",
                exit=exit_site.text,
                condition=condition_phrase(div.guard, div.arm),
                callee=callee,
                skipped_line=skipped.site.location.line,
                collective=collective,
            )
            yield Finding(
                code=CODE,
                message=message,
                location=exit_site.location,
                severity=severity_for(div.guard.kind, rule.severity),
                guard=guard_evidence(div.guard),
                chain=skipped.chain,
                collective=skipped.op,
            )
