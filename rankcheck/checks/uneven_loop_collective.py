"""RC103 uneven-loop-collective: a loop whose number of rounds can differ between ranks (its length
depends on the rank or on per-rank data, or a data-dependent `continue`/`break` skips the
collective) issues a collective in its body."""

from __future__ import annotations

from typing import Iterator

from rankcheck.checks.classify import claim
from rankcheck.checks.evidence import (
    cascade_of,
    condition_phrase,
    describe_chain,
    guard_evidence,
    sequence_evidence,
    severity_for,
    skipped_after,
    why,
)
from rankcheck.driver.analysis import Analysis
from rankcheck.ftypes import Finding
from rankcheck.interp.tree import GuardRef, Loop, Tree, own_nodes, tree_reaches
from rankcheck.program.ir import GuardKeyword
from rankcheck.rules_meta import get_rule
from rankcheck.sequences.flatten import class_runs, collective_events, first_collective

CODE = "RC103"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    for _, result in sorted(analysis.results.items()):
        for node in own_nodes(result.tree):
            if not isinstance(node, Loop) or node.uneven is None or not tree_reaches(node.body):
                continue
            uneven = node.uneven
            event = first_collective(node.body)
            if event is None or event.site is None or _even_within_groups(node.body, uneven):
                continue
            _, collective = describe_chain(event.chain)
            if uneven.keyword is GuardKeyword.CALL and uneven.taint is not None:
                # A framework call's own loop: the catalog says what decides its rounds.
                loop, length = f"the loop inside `{uneven.head}`", f"it runs until {uneven.taint.text}"
            elif uneven.keyword is GuardKeyword.DRIVEN:
                # The framework's loop calls the hook once per batch: reported at the hook's own
                # line that reaches the collective, the code the user wrote and looks at.
                loop = f"the loop inside `{uneven.head}`, which calls {uneven.condition},"
                length = f"how many batches it has depends on {why(uneven.taint, uneven.kind, uneven.location.path)}"
            elif uneven.keyword is GuardKeyword.ITEMS:
                # One collective per item of an argument: how many items is what differs.
                loop = f"`{uneven.head}`, which issues it once per item of `{uneven.condition}`,"
                length = f"how many items it has depends on {why(uneven.taint, uneven.kind, uneven.location.path)}"
            else:
                loop, length = f"`{uneven.head}`", f"its length depends on {why(uneven.taint, uneven.kind, uneven.location.path)}"
            reported = uneven.location
            if uneven.keyword is GuardKeyword.DRIVEN and len(event.chain) > 1:
                reported = event.chain[1].location  # the hook's own call on the way to it
            yield Finding(
                code=CODE,
                message=rule.render(
                    "length",
                    loop=loop,
                    why=length,
                    collective=collective,
                    line=reported.line if reported is not uneven.location else event.site.location.line,
                ),
                location=reported,
                severity=severity_for(uneven.kind, rule.severity),
                guard=guard_evidence(uneven),
                chain=event.chain,
                collective=event.op,
                cascade_of=cascade_of(uneven.taint),
            )
    for qual, divs in analysis.divergences.items():
        for div in divs:
            exit_event = div.exit_event
            if claim(analysis, qual, div) != CODE or exit_event is None or exit_event.site is None or div.event.site is None:
                continue
            way, skipped_line = skipped_after(div.event, exit_event)
            _, collective = describe_chain(way)
            yield Finding(
                code=CODE,
                message=rule.render(
                    "skip",
                    exit=exit_event.site.text,
                    condition=condition_phrase(div.guard, div.arm),
                    why=why(div.guard.taint, div.guard.kind, exit_event.site.location.path),
                    collective=collective,
                    line=skipped_line,
                ),
                location=exit_event.site.location,
                severity=severity_for(div.guard.kind, rule.severity),
                guard=guard_evidence(div.guard),
                chain=div.event.chain,
                collective=div.event.op,
                sequences=sequence_evidence(div),
                cascade_of=cascade_of(div.guard.taint),
            )


def _even_within_groups(body: Tree, uneven: GuardRef) -> bool:
    """Every collective the loop issues runs over a group whose members all share what its rounds
    depend on (GuardRef.uniform_in: rounds counted by the tensor-parallel rank, all-reduces over
    the data-parallel group): within each group the ranks loop alike."""
    if not uneven.uniform_in:
        return False
    runs = class_runs(body)
    if runs is None:
        return False
    collectives = [c for run in runs for event in run.events for c in collective_events(event)]
    return bool(collectives) and all(c.members is not None and c.members in uneven.uniform_in for c in collectives)
