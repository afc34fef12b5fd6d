"""RC108 rank-dies-before-collective: a raise, a failed assert or an exit with an error status,
taken only on some ranks and caught nowhere, ends those ranks before a collective the other ranks
still issue. Under torchrun, mp.spawn, accelerate, Lightning or the deepspeed launcher the failed
rank makes the launcher tear the job down (loud, not a hang); where nothing does (a plain `srun`
without --kill-on-bad-exit, a hand-rolled launcher) the other ranks wait. Off by default."""

from __future__ import annotations

from typing import Iterator

from rankcheck.checks.classify import claim
from rankcheck.checks.evidence import condition_phrase, describe_chain, guard_evidence, reaches_through, sequence_evidence, severity_for
from rankcheck.driver.analysis import Analysis
from rankcheck.ftypes import Finding
from rankcheck.rules_meta import get_rule

CODE = "RC108"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    for qual, divs in analysis.divergences.items():
        for div in divs:
            if claim(analysis, qual, div) != CODE or div.exit_event is None:
                continue
            exit_site = div.exit_event.site
            skipped = div.event
            assert exit_site is not None and skipped.site is not None
            callee, collective = describe_chain(skipped.chain)
            yield Finding(
                code=CODE,
                message=rule.render(
                    "dies",
                    exit=exit_site.text,
                    condition=condition_phrase(div.guard, div.arm),
                    callee=callee,
                    skipped_line=skipped.site.location.line,
                    collective=collective if reaches_through(skipped.chain) else "it",
                ),
                location=exit_site.location,
                severity=severity_for(div.guard.kind, rule.severity),
                guard=guard_evidence(div.guard),
                chain=skipped.chain,
                collective=skipped.op,
                sequences=sequence_evidence(div),
            )
