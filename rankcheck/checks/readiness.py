"""What the readiness rules (RC201-RC203) share: their knowledge (rules/readiness.toml), the
callee of a call site by its full name, an argument by position or keyword, the constants an
expression can hold, and the entry paths of a function in the static call graph.

These rules do not need the rank analysis: they read the linked program's call sites. A value is
followed only as far as one function and its module show it (a local or module-level assignment,
an `if`-expression, a call whose own arguments are constants, a command-line option's default);
anything further is unknown, and the rules stay silent on what they do not know.
"""

from __future__ import annotations

import functools
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Set, Tuple

from rankcheck import _toml
from rankcheck.catalog import CatalogError
from rankcheck.ftypes import Location
from rankcheck.program.ir import (
    ASSIGN,
    MODULE_FUNCTION,
    CallSite,
    Expr,
    FunctionSummary,
    nested_bodies,
    statements,
    walk_tuples,
)
from rankcheck.program.link import Program
from rankcheck.rules_meta import rules_dir

KNOWLEDGE_FILE = "readiness.toml"
# Callers followed up from a function, and callees down from an entry: deeper chains are rare in
# training code, and a bound keeps a tangled call graph from costing the run.
MAX_DEPTH = 12


@dataclass(frozen=True)
class Argument:
    """Where a call takes one parameter: its position (-1: keyword only) and its keyword."""

    position: int
    keyword: str


@dataclass(frozen=True)
class GroupCreator:
    name: str
    timeout: Argument
    backend: Optional[Argument]
    members: Optional[Argument]  # the world size or the list of ranks
    creates: str  # "default", "group", "groups" or "configuration"
    default_backend: str  # "" unknown, "inherit": the default group's
    default_timeout: str


@dataclass(frozen=True)
class Loader:
    name: str
    workers: Argument
    context: Argument


@dataclass(frozen=True)
class Knowledge:
    group_creators: Mapping[str, GroupCreator]
    gloo_only: Mapping[str, Argument]  # barrier -> its group argument
    gloo: str
    backend_attributes: Mapping[str, str]
    backend_tests: Tuple[str, ...]  # words of a condition that tests the backend
    never_wait: FrozenSet[str]  # backends whose groups never wait on another process
    loaders: Mapping[str, Loader]
    cuda_prefixes: Tuple[str, ...]
    cuda_exempt: Tuple[str, ...]
    cuda_methods: FrozenSet[str]
    device_methods: FrozenSet[str]
    device_keywords: FrozenSet[str]
    device_factories: FrozenSet[str]
    device_prefix: str
    start_method_calls: FrozenSet[str]
    context_calls: FrozenSet[str]
    safe_start_methods: FrozenSet[str]
    option_calls: FrozenSet[str]

    def initialises_cuda(self, name: str) -> bool:
        return name.startswith(self.cuda_prefixes) and not any(
            name == exempt or (exempt.endswith(".") and name.startswith(exempt)) for exempt in self.cuda_exempt
        )


def _argument(entry: Mapping, key: str, where: str) -> Optional[Argument]:
    value = entry.get(key)
    if value is None:
        return None
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], int) and isinstance(value[1], str)):
        raise CatalogError(f"{where}: `{key}` must be [position, keyword] (position -1: keyword only)")
    return Argument(value[0], value[1])


def _names(table: Mapping, key: str, where: str) -> Tuple[str, ...]:
    value = table.get(key, [])
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise CatalogError(f"{where}: `{key}` must be a list of names")
    return tuple(value)


def _tables(data: Mapping, key: str, where: str) -> Iterator[Tuple[str, Mapping, str]]:
    """(name, entry) of each table under `key`, and of each of its aliases."""
    section = data.get(key, {})
    if not isinstance(section, dict):
        raise CatalogError(f"{where}: `readiness.{key}` must be a table")
    for name, entry in section.items():
        at = f"{where}: readiness.{key}.{name}"
        if not isinstance(entry, dict):
            raise CatalogError(f"{at}: must be a table")
        for alias in (name, *_names(entry, "aliases", at)):
            yield alias, entry, at


@functools.lru_cache(maxsize=4)
def load_knowledge(directory: Optional[str] = None) -> Knowledge:
    path = (rules_dir() if directory is None else Path(directory)) / KNOWLEDGE_FILE
    where = str(path)
    try:
        data = _toml.loads(path.read_text(encoding="utf-8")).get("readiness", {})
    except (OSError, _toml.TOMLDecodeError) as exc:
        raise CatalogError(f"{where}: {exc}") from exc
    creators = {}
    for name, entry, at in _tables(data, "group_creator", where):
        timeout = _argument(entry, "timeout", at)
        if timeout is None:
            raise CatalogError(f"{at}: `timeout` is required")
        creators[name] = GroupCreator(
            name, timeout, _argument(entry, "backend", at), _argument(entry, "members", at), str(entry.get("creates", "group")),
            str(entry.get("default_backend", "")), str(entry.get("default_timeout", "the default")),
        )
    gloo_only = {}
    for name, entry, at in _tables(data, "gloo_only", where):
        gloo_only[name] = _argument(entry, "group", at) or Argument(0, "group")
    loaders = {}
    for name, entry, at in _tables(data, "loader", where):
        workers, context = _argument(entry, "workers", at), _argument(entry, "context", at)
        if workers is None or context is None:
            raise CatalogError(f"{at}: `workers` and `context` are required")
        loaders[name] = Loader(name, workers, context)
    cuda, start, backends = data.get("cuda", {}), data.get("start_method", {}), data.get("backends", {})
    at = f"{where}: readiness"
    return Knowledge(
        group_creators=creators,
        gloo_only=gloo_only,
        gloo=str(backends.get("gloo", "gloo")),
        backend_attributes={str(k): str(v) for k, v in dict(backends.get("attributes", {})).items()},
        backend_tests=_names(backends, "tests", at + ".backends"),
        never_wait=frozenset(_names(backends, "never_wait", at + ".backends")),
        loaders=loaders,
        cuda_prefixes=_names(cuda, "prefixes", at + ".cuda"),
        cuda_exempt=_names(cuda, "not_initialising", at + ".cuda"),
        cuda_methods=frozenset(_names(cuda, "methods", at + ".cuda")),
        device_methods=frozenset(_names(cuda, "device_methods", at + ".cuda")),
        device_keywords=frozenset(_names(cuda, "device_keywords", at + ".cuda")),
        device_factories=frozenset(_names(cuda, "device_factories", at + ".cuda")),
        device_prefix=str(cuda.get("device_prefix", "cuda")),
        start_method_calls=frozenset(_names(start, "calls", at + ".start_method")),
        context_calls=frozenset(_names(start, "contexts", at + ".start_method")),
        safe_start_methods=frozenset(_names(start, "safe", at + ".start_method")),
        option_calls=frozenset(_names(data.get("options", {}), "calls", at + ".options")),
    )


# ------------------------------------------------------------------------------------------------
# call sites


def callee_name(program: Program, fn: FunctionSummary, site: CallSite) -> Optional[str]:
    """The full name of what a call calls, where the module shows it (`dist.init_process_group`
    -> `torch.distributed.init_process_group`, through the project's re-exports too)."""
    target = program.static_target(fn, site)
    return target.qualname if target is not None else None


def argument(site: CallSite, where: Argument) -> Optional[Expr]:
    for keyword, value in site.kwargs:
        if keyword == where.keyword:
            return value
    if 0 <= where.position < len(site.args):
        return site.args[where.position]
    return None


def argument_text(site: CallSite, where: Argument) -> str:
    for keyword, text in site.kwarg_texts:
        if keyword == where.keyword:
            return text
    if 0 <= where.position < len(site.arg_texts):
        return site.arg_texts[where.position]
    return ""


def call_text(site: CallSite) -> str:
    """`dist.init_process_group(...)`, `model.cuda()`: the call as a message quotes it."""
    return f"`{site.text}({'...' if site.args or site.kwargs or site.has_star else ''})`"


def location(program: Program, fn: FunctionSummary, site: CallSite) -> Location:
    span = site.span
    return Location(program.path_of_function[fn.qualname], span.line, span.column, span.end_line, span.end_column)


def place(program: Program, fn: FunctionSummary, site: CallSite) -> str:
    """`path:line`, for a message that points at a second place."""
    return f"{program.path_of_function[fn.qualname]}:{site.span.line}"


# ------------------------------------------------------------------------------------------------
# what a value can be


UNKNOWN = object()


class Values:
    """The constants an expression can hold, as far as its function and module show them.

    `of(fn, expr)` gives the set of possible values, with `UNKNOWN` among them where some path is
    not known. A name is looked up in the function's own assignments, then the module's; a call
    by the `resolve_call` hook the rule gives (the site, its callee's full name) -> values."""

    def __init__(self, program: Program, knowledge: Knowledge, graph: Optional[CallGraph] = None) -> None:
        self.program = program
        self.knowledge = knowledge
        self.graph = graph  # binds parameters from what the project's calls pass, when given
        self._assignments: Dict[str, Dict[str, List[Expr]]] = {}
        self._options: Optional[Dict[Tuple[str, str], Set[object]]] = None

    def assignments(self, fn: FunctionSummary) -> Dict[str, List[Expr]]:
        """Name -> the values a function's body assigns to it (plain `name = value` only)."""
        found = self._assignments.get(fn.qualname)
        if found is None:
            found = {}
            for stmt in statements(fn.body):
                if stmt[0] != ASSIGN.tag:
                    continue
                for target in ASSIGN.get(stmt, "targets"):
                    if target[0] == "name":
                        found.setdefault(target[1], []).append(ASSIGN.get(stmt, "value"))
            self._assignments[fn.qualname] = found
        return found

    def module_function(self, fn: FunctionSummary) -> Optional[FunctionSummary]:
        return self.program.functions.get(f"{fn.module}.{MODULE_FUNCTION}")

    def of(self, fn: FunctionSummary, expr: Optional[Expr], depth: int = 0) -> Set[object]:
        if expr is None or depth > 6:
            return {UNKNOWN}
        tag = expr[0]
        if tag == "const":
            return {expr[1].lower() if isinstance(expr[1], str) else expr[1]}
        if tag == "ifexp":
            return self.of(fn, expr[2], depth + 1) | self.of(fn, expr[3], depth + 1)
        if tag == "bool":  # `args.workers or 4`: any operand can be the value
            out: Set[object] = set()
            for operand in expr[2]:
                out |= self.of(fn, operand, depth + 1)
            return out
        if tag == "attr":
            named = self.knowledge.backend_attributes.get(expr[2])
            if named is not None:
                return {named}
            if expr[1][0] in ("name", "attr"):
                options = self.options()
                # the script's own option first: two scripts may give one option other defaults
                option = options.get((fn.module, expr[2])) or options.get(("", expr[2]))
                if option is not None:
                    return set(option)
            return {UNKNOWN}
        if tag == "name":
            for scope in (fn, self.module_function(fn)):
                if scope is None:
                    continue
                values = self.assignments(scope).get(expr[1])
                if values:
                    out = set()
                    for value in values:
                        out |= self.of(scope, value, depth + 1)
                    return out
            if expr[1] in fn.params:
                return self.passed(fn, expr[1], depth)
            return {UNKNOWN}
        if tag == "call":
            site = fn.calls[expr[1]]
            name = callee_name(self.program, fn, site)
            if name in self.knowledge.device_factories or name in self.knowledge.context_calls:
                return self.of(fn, site.args[0], depth + 1) if site.args else {UNKNOWN}
            return {UNKNOWN}
        return {UNKNOWN}

    def passed(self, fn: FunctionSummary, param: str, depth: int) -> Set[object]:
        """What the project's calls of `fn` pass for one parameter (its default where a call
        leaves it out is not in the summary: unknown)."""
        if self.graph is None:
            return {UNKNOWN}
        params = fn.caller_params()
        position = params.index(param) if param in params else -1
        out: Set[object] = set()
        for caller_qual in sorted(self.graph.callers.get(fn.qualname, ())):
            caller = self.program.functions[caller_qual]
            for site in caller.calls:
                if self.graph.site_callee(caller, site) is not fn:
                    continue
                given = None if site.has_star else argument(site, Argument(position, param))
                out |= self.of(caller, given, depth + 1)
        return out or {UNKNOWN}

    def options(self) -> Dict[Tuple[str, str], Set[object]]:
        """(module, option) -> its defaults, from every `add_argument("--opt", default=...)` of
        the project; under module "" the defaults of every module that defines it."""
        if self._options is None:
            options: Dict[Tuple[str, str], Set[object]] = {}
            for fn in self.program.functions.values():
                for site in fn.calls:
                    if site.callee[0] != "attr" or site.callee[2] not in self.knowledge.option_calls:
                        continue
                    dest = _option_dest(site)
                    if dest is None:
                        continue
                    default = dict(site.kwargs).get("default")
                    value = default[1] if default is not None and default[0] == "const" else (UNKNOWN if default is not None else None)
                    options.setdefault((fn.module, dest), set()).add(value)
                    options.setdefault(("", dest), set()).add(value)
            self._options = options
        return self._options


def _option_dest(site: CallSite) -> Optional[str]:
    dest = dict(site.kwargs).get("dest")
    if dest is not None and dest[0] == "const" and isinstance(dest[1], str):
        return dest[1]
    for arg in site.args:
        if arg[0] == "const" and isinstance(arg[1], str) and arg[1].startswith("--"):
            return arg[1][2:].replace("-", "_")
    return None


def known(values: Iterable[object]) -> List[object]:
    return sorted((v for v in values if v is not UNKNOWN), key=repr)


# ------------------------------------------------------------------------------------------------
# entry paths


class CallGraph:
    """The static call graph both ways, and the entry paths of a function: the functions nothing
    in the project calls (scripts' module bodies, `main`s, hooks a framework calls) that reach it."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.callees = program.static_callees()
        callers: Dict[str, Set[str]] = {}
        for caller, called in self.callees.items():
            for callee in called:
                if callee != caller:
                    callers.setdefault(callee, set()).add(caller)
        self.callers = callers

    def entries(self, qual: str) -> List[str]:
        """The entries whose calls reach `qual` (itself, when nothing calls it)."""
        seen = {qual}
        queue = deque([(qual, 0)])
        entries = []
        while queue:
            current, depth = queue.popleft()
            callers = self.callers.get(current, set())
            if not callers or depth >= MAX_DEPTH:
                entries.append(current)
                continue
            for caller in sorted(callers - seen):
                seen.add(caller)
                queue.append((caller, depth + 1))
        return sorted(entries)

    def reached(self, roots: Iterable[str]) -> Set[str]:
        """The functions the roots call, transitively (roots included)."""
        seen = set(roots)
        queue = deque((r, 0) for r in seen)
        while queue:
            current, depth = queue.popleft()
            if depth >= MAX_DEPTH:
                continue
            for callee in self.callees.get(current, ()):
                if callee not in seen:
                    seen.add(callee)
                    queue.append((callee, depth + 1))
        return seen

    def site_callee(self, fn: FunctionSummary, site: CallSite) -> Optional[FunctionSummary]:
        """The project function a call site runs, if the call graph knows it."""
        target = self.program.static_target(fn, site)
        return self.program.function_run(target) if target is not None else None


def guards_around(fn: FunctionSummary, index: int) -> List[str]:
    """The conditions (as written) of the `if`/`while` statements of `fn` whose body or `else`
    holds call site `index`, outermost first."""
    wanted = ("call", index)

    def holds(node: object) -> bool:
        return any(t == wanted for t in walk_tuples(node))

    found: List[str] = []
    body = fn.body
    while True:
        inner = None
        for stmt in body:
            bodies = nested_bodies(stmt)
            for nested in bodies:
                if holds(nested):
                    if stmt[0] in ("if", "while"):
                        found.append(stmt[4].condition)
                    inner = nested
                    break
            if inner is not None:
                break
        if inner is None:
            return found
        body = inner


def handler_calls(fn: FunctionSummary) -> FrozenSet[int]:
    """The call sites of `fn` inside an `except` handler: code for when something failed."""
    found: Set[int] = set()
    for stmt in statements(fn.body):
        if stmt[0] == "try":
            for handler in stmt[2]:
                found.update(t[1] for t in walk_tuples(handler[2]) if t[0] == "call")
    return frozenset(found)
