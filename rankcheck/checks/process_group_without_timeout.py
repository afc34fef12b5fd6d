"""RC201 process-group-without-timeout: a call that creates a process group (or configures the
one a framework creates for the user) and leaves its timeout out. Every collective of that group
then waits the default, 10 minutes for NCCL and 30 for gloo, before anything reports a hang; the
advice is a timeout a few times the longest legitimate collective. `new_group` does not inherit
the default group's timeout: each group needs its own. A call passing `**kwargs` or a timeout from
configuration counts as set; a framework that creates the group on the user's behalf
(`Accelerator()`, `Trainer(strategy="ddp")`) is not the user's line. Knowledge: rules/readiness.toml."""

from __future__ import annotations

from typing import Iterator

from rankcheck.checks.readiness import Values, argument, call_text, callee_name, load_knowledge, location
from rankcheck.driver.analysis import Analysis
from rankcheck.ftypes import Finding
from rankcheck.program.ir import Expr, FunctionSummary, statements
from rankcheck.rules_meta import get_rule

CODE = "RC201"

_WHAT = {
    "default": "the default process group",
    "group": "a process group",
    "groups": "process groups",
    "configuration": "the process group it configures",
}


def _one_process(members: Expr) -> bool:
    if members[0] == "const":
        return members[1] == 1 or (isinstance(members[1], tuple) and len(members[1]) == 1)
    return members[0] == "tuple" and len(members[1]) == 1


def _field_set_later(values: Values, fn: FunctionSummary, call: int, field: str) -> bool:
    """The configuration object call site `call` builds is kept in a name (`handler =
    InitProcessGroupKwargs()`) whose `field` the function sets (`handler.timeout = ...`): the
    object the framework is given has it."""
    kept = {name for name, assigned in values.assignments(fn).items() if ("call", call) in assigned}
    if not kept:
        return False
    for stmt in statements(fn.body):
        if stmt[0] == "assign":
            for target in stmt[1]:
                stored = target[1] if target[0] == "other" else None
                if stored is not None and stored[0] == "attr" and stored[2] == field and stored[1][0] == "name" and stored[1][1] in kept:
                    return True
    return False


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    knowledge = load_knowledge()
    program = analysis.program
    values = Values(program, knowledge)
    for fn in program.functions.values():
        for site in fn.calls:
            if site.has_star:
                continue  # `**kwargs` may carry the timeout
            creator = knowledge.group_creators.get(callee_name(program, fn, site) or "")
            if creator is None:
                continue
            timeout = argument(site, creator.timeout)
            if timeout is not None and timeout != ("const", None):
                continue
            if creator.creates == "configuration" and _field_set_later(values, fn, site.index, creator.timeout.keyword):
                continue  # `kwargs = InitProcessGroupKwargs()` then `kwargs.timeout = timedelta(...)`
            backend = argument(site, creator.backend) if creator.backend is not None else None
            if backend is not None and values.of(fn, backend) <= knowledge.never_wait:
                continue  # a simulated group ("fake") waits on nobody
            members = argument(site, creator.members) if creator.members is not None else None
            if members is not None and _one_process(members):
                continue  # world_size=1, ranks=[rank]: nobody to wait for
            yield Finding(
                code=CODE,
                message=rule.render(
                    "missing" if timeout is None else "none",
                    call=call_text(site),
                    what=_WHAT.get(creator.creates, "a process group"),
                    default=creator.default_timeout,
                ),
                location=location(program, fn, site),
                severity=rule.severity,
            )
