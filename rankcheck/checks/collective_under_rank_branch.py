"""RC101 collective-under-rank-branch: a call that reaches a collective runs only on the ranks that
take a rank-dependent branch, and the other ranks issue a different sequence of collectives."""

from __future__ import annotations

from typing import Dict, Iterator, Tuple, cast

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
from rankcheck.ftypes import Finding, Location
from rankcheck.interp.tree import SiteRef
from rankcheck.rules_meta import get_rule
from rankcheck.sequences.flatten import Event

CODE = "RC101"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    sharded = analysis.program.catalog.sharded_forward
    for qual, divs in analysis.divergences.items():
        # Submodules whose forwards one guard skips (a vision tower and its projector): one
        # finding for the guard, at the first of them; each is a gather only under sharding.
        first_skipped: Dict[Tuple[Location, bool], Location] = {}
        for div in divs:
            if sharded is not None and _skips_submodule(div.event, sharded.note):
                where = (div.guard.location, div.arm)
                here = cast(SiteRef, div.event.site).location
                first_skipped[where] = min(first_skipped.get(where, here), here, key=lambda at: (at.line, at.column))
        for div in divs:
            if claim(analysis, qual, div) != CODE:
                continue
            event = div.event
            if sharded is not None and _skips_submodule(event, sharded.note) and cast(SiteRef, event.site).location != first_skipped[div.guard.location, div.arm]:
                continue
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


def _skips_submodule(event: Event, note: str) -> bool:
    """The event is a submodule's forward under parameter sharding (Catalog.sharded_forward)."""
    return event.site is not None and bool(event.chain) and event.chain[-1].note == note
