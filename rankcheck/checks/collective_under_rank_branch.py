"""RC101 collective-under-rank-branch: a call that reaches a collective runs only on the ranks that
take a rank-dependent branch, and the other ranks issue a different sequence of collectives."""

from __future__ import annotations

from typing import Dict, Iterator, Set, Tuple, cast

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
from rankcheck.ftypes import ChainStep, Finding, Location
from rankcheck.interp.tree import GuardRef, SiteRef
from rankcheck.rules_meta import get_rule
from rankcheck.sequences.flatten import Event

CODE = "RC101"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    sharded = analysis.program.catalog.sharded_forward
    reported: Set[Tuple[Location, object]] = set()
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
            assert event.site is not None
            location, chain = _at_the_guard(div.guard, event.site.location, event.chain)
            # The same guarded call reached from another caller; for skipped submodules, any of
            # those the same guard skips (one finding per guard, as above).
            once = (div.guard.location, div.arm) if sharded is not None and _skips_submodule(event, sharded.note) else (location, div.guard.location)
            if once in reported:
                continue
            reported.add(once)
            callee, collective = describe_chain(chain)
            # A helper that calls what its caller handed it under its own rank test (`run_on_main`).
            variant = "handed" if div.guard.runs_callers_callable else "through" if reaches_through(chain) else "direct"
            yield Finding(
                code=CODE,
                message=rule.render(variant, callee=callee, condition=condition_phrase(div.guard, div.arm), collective=collective),
                location=location,
                severity=severity_for(div.guard.kind, rule.severity),
                guard=guard_evidence(div.guard),
                chain=chain,
                collective=event.op,
                sequences=sequence_evidence(div),
            )


def _at_the_guard(guard: GuardRef, site: Location, chain: Tuple[ChainStep, ...]) -> Tuple[Location, Tuple[ChainStep, ...]]:
    """Where the finding goes: the guarded call itself. A guard inside a called function (a loss
    that all-reduces only `if len(pos_inds) > 0:` of this rank's batch) is reported at the call it
    guards there, with the chain from it, once for all the callers that reach it; a maintainer
    fixes that function, not each training loop that calls it. A helper running a function its
    caller handed it under its own rank test stays at that caller (the caller chose what runs)."""
    if guard.runs_callers_callable or _inside(site, guard.location):
        return site, chain
    for index, step in enumerate(chain):
        if _inside(step.location, guard.location):
            return step.location, chain[index:]
    return site, chain


def _inside(where: Location, block: Location) -> bool:
    return where.path == block.path and block.line <= where.line <= block.end_line


def _skips_submodule(event: Event, note: str) -> bool:
    """The event is a submodule's forward under parameter sharding (Catalog.sharded_forward)."""
    return event.site is not None and bool(event.chain) and event.chain[-1].note == note
