"""RC104 rank-dependent-collective-argument: a collective gets a tensor whose shape depends on the
rank or per-rank data, or an op/src/dst that differs between ranks."""

from __future__ import annotations

from typing import Iterator

from rankcheck.checks.evidence import cascade_of, severity_for, source_of, why
from rankcheck.driver.analysis import Analysis
from rankcheck.ftypes import PER_RANK_DATA, RANK_IDENTITY, ChainStep, Finding
from rankcheck.interp.values import TaintKind
from rankcheck.rules_meta import get_rule

CODE = "RC104"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    for _, result in sorted(analysis.results.items()):
        for hazard in result.arg_hazards:
            site, taint = hazard.site, hazard.taint
            kind = RANK_IDENTITY if taint is not None and taint.kind is TaintKind.RANK else PER_RANK_DATA
            collective = f"`{site.text}`"
            if hazard.argument == "shape":
                reason = f"its shape depends on {why(taint, kind, site.location.path)}"
                message = rule.render("shape", collective=collective, argument=hazard.text, why=reason)
            else:
                reason = f"it comes from {why(taint, kind, site.location.path)}"
                message = rule.render("argument", collective=collective, keyword=hazard.argument, argument=hazard.text, why=reason)
            yield Finding(
                code=CODE,
                message=message,
                location=site.location,
                severity=severity_for(kind, rule.severity),
                chain=(ChainStep(site.location, site.text),),
                collective=hazard.op,
                source=source_of(taint),
                extra=(("argument", hazard.argument),),
                cascade_of=cascade_of(taint),
            )
