"""RC103 uneven-loop-collective: a loop whose number of rounds can differ between ranks (its length
depends on the rank or on per-rank data, or a data-dependent `continue`/`break` skips the
collective) issues a collective in its body."""

from __future__ import annotations

from typing import Iterator

from rankcheck.driver.analysis import Analysis
from rankcheck.checks.evidence import condition_phrase, describe_chain, guard_evidence, severity_for, why
from rankcheck.ftypes import PER_RANK_DATA, Finding
from rankcheck.interp.interpreter import tree_reaches
from rankcheck.rules_meta import get_rule
from rankcheck.sequences.compare import first_collective, own_nodes

CODE = "RC103"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    for _, result in sorted(analysis.results.items()):
        for node in own_nodes(result.tree):
            if node[0] != "loop" or node[5] is None or not tree_reaches(node[3]):
                continue
            uneven = node[5]
            event = first_collective(node[3])
            if event is None:
                continue
            _, collective = describe_chain(event.chain)
            yield Finding(
                code=CODE,
                message=rule.message.format(
                    loop=f"`{uneven.head}`",
                    why=f"its length depends on {why(uneven.taint, uneven.kind, uneven.location.path)}",
                    collective=collective,
                    line=event.site.location.line,
                ),
                location=uneven.location,
                severity=severity_for(uneven.kind, rule.severity),
                guard=guard_evidence(uneven),
                chain=event.chain,
                collective=event.op,
            )
    for divs in analysis.divergences.values():
        for div in divs:
            exit_event = div.exit_event
            if div.cause != "exit" or exit_event is None or exit_event.exit_kind not in ("continue", "break"):
                continue
            if div.guard.kind != PER_RANK_DATA:
                continue  # a rank-identity skip is RC102's
            _, collective = describe_chain(div.event.chain)
            yield Finding(
                code=CODE,
                message=(
                    f"`{exit_event.site.text}` on ranks where {condition_phrase(div.guard, div.arm)} "
                    f"({why(div.guard.taint, div.guard.kind, exit_event.site.location.path)}) skips {collective} (line "
                    f"{div.event.site.location.line}) that the other ranks still issue; the loop "
                    "runs unevenly and they wait in it"
                ),
                location=exit_event.site.location,
                severity=severity_for(div.guard.kind, rule.severity),
                guard=guard_evidence(div.guard),
                chain=div.event.chain,
                collective=div.event.op,
            )
