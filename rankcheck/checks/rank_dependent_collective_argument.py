"""RC104 rank-dependent-collective-argument: a collective gets a tensor whose shape depends on the
rank or per-rank data, or an op/src/dst that differs between ranks."""

from __future__ import annotations

from typing import Iterator

from rankcheck.driver.analysis import Analysis
from rankcheck.checks.evidence import severity_for, source_of, why
from rankcheck.ftypes import PER_RANK_DATA, RANK_IDENTITY, ChainStep, Finding
from rankcheck.rules_meta import get_rule

CODE = "RC104"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    for _, result in sorted(analysis.results.items()):
        for site, op, what, text, taint in result.arg_hazards:
            kind = RANK_IDENTITY if taint is not None and taint.kind == "rank" else PER_RANK_DATA
            if what == "shape":
                described = f"`{text}` whose shape"
                reason = f"its shape depends on {why(taint, kind, site.location.path)}"
            else:
                described = f"`{what}={text}`"
                reason = f"it comes from {why(taint, kind, site.location.path)}"
            source = source_of(taint)
            yield Finding(
                code=CODE,
                message=rule.message.format(collective=f"`{site.text}`", what=described, why=reason).replace(
                    "whose shape that differs", "whose shape differs"
                ),
                location=site.location,
                severity=severity_for(kind, rule.severity),
                chain=(ChainStep(site.location, site.text),),
                collective=op,
                source=source,
                extra=(("argument", what),),
            )
