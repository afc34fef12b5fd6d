"""RC102 rank-exit-before-collective: a return/continue/break/raise/exit taken only on some ranks
skips a collective that the other ranks go on to issue."""

from __future__ import annotations

from typing import Iterator

from rankcheck.driver.analysis import Analysis
from rankcheck.checks.evidence import condition_phrase, describe_chain, guard_evidence, severity_for
from rankcheck.ftypes import PER_RANK_DATA
from rankcheck.ftypes import Finding
from rankcheck.rules_meta import get_rule

CODE = "RC102"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    for divs in analysis.divergences.values():
        for div in divs:
            if div.cause != "exit" or div.exit_event is None:
                continue
            if div.guard.kind == PER_RANK_DATA and (
                div.exit_event.exit_kind in ("continue", "break", "exit") or div.guard.head.startswith("assert ")
            ):
                # A data-dependent continue/break makes the loop uneven: RC103 reports it. An
                # assert or exit on local data is a check that ends the process, which torchrun
                # turns into a job failure; a test suite is full of them. An explicit `raise` on
                # local data stays a (warning) finding: launchers that do not tear the job down
                # leave the other ranks waiting.
                continue
            exit_site = div.exit_event.site
            skipped = div.event
            callee, collective = describe_chain(skipped.chain)
            message = rule.message.format(
                exit=exit_site.text,
                condition=condition_phrase(div.guard, div.arm),
                callee=callee,
                skipped_line=skipped.site.location.line,
                collective="it" if len(skipped.chain) <= 1 else collective,
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
