"""RC101 collective-under-rank-branch: a call that reaches a collective runs only on the ranks that
take a rank-dependent branch, and the other ranks issue a different sequence of collectives."""

from __future__ import annotations

from typing import Iterator

from rankcheck.driver.analysis import Analysis
from rankcheck.checks.evidence import condition_phrase, describe_chain, guard_evidence, severity_for
from rankcheck.ftypes import Finding
from rankcheck.rules_meta import get_rule

CODE = "RC101"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    for divs in analysis.divergences.values():
        for div in divs:
            if div.cause != "guard":
                continue
            event = div.event
            callee, collective = describe_chain(event.chain)
            reached = "it" if len(event.chain) <= 1 else collective
            message = rule.message.format(
                callee=callee,
                condition=condition_phrase(div.guard, div.arm),
                collective=reached,
            )
            if len(event.chain) > 1:
                message = message.replace(f"{callee} runs", f"{callee} (which reaches {collective}) runs", 1)
            yield Finding(
                code=CODE,
                message=message,
                location=event.site.location,
                severity=severity_for(div.guard.kind, rule.severity),
                guard=guard_evidence(div.guard),
                chain=event.chain,
                collective=event.op,
            )
