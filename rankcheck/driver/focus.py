"""focus: which functions must be analysed as roots for the findings of some files only.

pre-commit and the language server report on a few files of a large project. A finding in file F
sits in the own code of the root it comes from (the final loop of `driver.analysis.analyse`), one of F's
functions. A root's interpretation reads, besides code interpreted on demand
(callees in call mode, module variables, class attributes), two learned inputs (interp/memo.py:
"binding" and "gstore" nodes):

* its parameter bindings, joined from the `call_args` recorded by the root runs of its callers,
  which were bound by *their* callers, and so on up: so every transitive caller that binds a
  parameter is a root;
* module variables stored through `global`, joined from every run of a function that stores them,
  and those runs are bound by their callers: so every writer of a variable that is read, and its
  callers, are roots.

`CallerGraph` over-approximates "may record a call to" from the summaries alone, as
`prefilter.relevant_functions` does: the target a dotted name, `self.m()` or `super().m()`
resolves to (exactly as the interpreter resolves them), a class's `__init__` for a construction,
every project function, method or class of the callee's name for `obj.name()` (the object's type
or module is a value), and, for a variable called as a function (`fn = pick(); fn()`), any project
function the caller names as a value. An edge is kept only where the call binds one of the callee's
parameters (`binds_a_parameter`, as `Interpreter._bind_args` binds them): a call that passes the
callee nothing it takes records nothing in its bindings. Without that, name-matched calls chain
through a large project: on Megatron-LM, `obj.get()`, `obj.read(...)` and
`msc.types.Range(offset=..., size=...)` (keywords the project's own `Range` does not take) made
`vit_model.py`'s analysis take in 6,600 of 18,000 functions; it takes in about 500 now.

Which class attributes and module variables a run reads depends on the values it meets, so
`driver.analysis.analyse` records them as it goes (storing methods run as roots by
`Interpreter.class_attr`, `global` variables read) and widens the roots with the functions that
feed them and their callers until nothing new is needed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator

from rankcheck.program.ir import (
    Body,
    CallSite,
    FunctionSummary,
    statements,
    walk_tuples,
)
from rankcheck.program.link import Program


def functions_by_file(program: Program) -> dict[str, set[str]]:
    """Module name, and file path as the summaries spell it -> the functions defined there
    (module bodies included)."""
    index: dict[str, set[str]] = {}
    for qual, fn in program.functions.items():
        index.setdefault(fn.module, set()).add(qual)
        path = program.path_of_function.get(qual)
        if path is not None and path != fn.module:
            index.setdefault(path, set()).add(qual)
    return index


def functions_in(index: dict[str, set[str]], focus: Iterable[str]) -> set[str]:
    """The functions of the focused modules, given as module names or file paths
    (`functions_by_file`'s index)."""
    found: set[str] = set()
    for name in set(focus):
        found |= index.get(name, set())
    return found


def global_writers(program: Program) -> dict[tuple[str, str], set[str]]:
    """(module, variable) -> the functions that declare it `global` and so may store it."""
    writers: dict[tuple[str, str], set[str]] = {}
    update_global_writers(writers, (), program.functions.values())
    return writers


def update_global_writers(
    writers: dict[tuple[str, str], set[str]], old: Iterable[FunctionSummary], new: Iterable[FunctionSummary]
) -> None:
    """`global_writers` after the functions `old` were replaced by `new`."""
    for fn in old:
        for names in _global_declarations(fn.body):
            for name in names:
                writers.get((fn.module, name), set()).discard(fn.qualname)
    for fn in new:
        for names in _global_declarations(fn.body):
            for name in names:
                writers.setdefault((fn.module, name), set()).add(fn.qualname)



def _global_declarations(body: Body) -> Iterator[tuple[str, ...]]:
    for stmt in statements(body):
        if stmt[0] == "global":
            yield stmt[1]


class CallerGraph:
    """Who may call whom, from the summaries (an over-approximation of what interpretation sees)."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self._callers: dict[str, set[str]] = {}
        by_name: dict[str, set[str]] = {}
        for qual, fn in program.functions.items():
            by_name.setdefault(fn.name, set()).add(qual)
        for qual, cls in program.classes.items():
            init = program.find_method(qual, "__init__")
            if init is not None:
                by_name.setdefault(cls.name, set()).add(init.qualname)
        # `sync = helper` (an alias a module binds) makes `mod.sync()` reach `helper` too.
        for summary in program.modules.values():
            for alias, target in summary.imports:
                resolved = program.resolve(target)
                if resolved.kind == "function":
                    by_name.setdefault(alias, set()).add(resolved.qualname)
                elif resolved.kind == "class":
                    init = program.find_method(resolved.qualname, "__init__")
                    if init is not None:
                        by_name.setdefault(alias, set()).add(init.qualname)
        self._by_name = by_name
        # `trainer.fit(module, ...)` calls the module's step hooks (catalog `drives`): a method of
        # that name may call every project hook of those names.
        self._driven_hooks: dict[str, set[str]] = {}
        for spec in program.catalog.types.values():
            for method, implicit in spec.methods.items():
                for driven in implicit.drives:
                    self._driven_hooks.setdefault(method, set()).add(driven.hook)
        # caller -> what it may call: to take a function's edges out when its body is replaced
        self._callees_of: dict[str, set[str]] = {}
        for fn in program.functions.values():
            self._add_edges(fn)

    def _add_edges(self, fn: FunctionSummary) -> None:
        by_name = self._by_name
        callees: set[str] = set()
        mentioned: set[str] | None = None
        functions = self.program.functions
        for site in fn.calls:
            if not site.args and not site.kwargs:
                continue  # passes nothing: it binds no parameter of whatever it calls
            found = set(self._callees(fn, site, by_name))
            if self._calls_a_value(fn, site):
                # A variable or attribute called as a function: it holds a reference, and the
                # function referred to is named somewhere as a value (here, in the common case).
                if mentioned is None:
                    mentioned = set(_value_names(fn))
                for name in mentioned:
                    found.update(by_name.get(name, ()))
            for qual in found:
                called = functions.get(qual)
                if called is None or binds_a_parameter(site, called):
                    callees.add(qual)
        if callees:
            self._callees_of[fn.qualname] = callees
            for callee in callees:
                self._callers.setdefault(callee, set()).add(fn.qualname)

    def replace_functions(self, old: Iterable[FunctionSummary], new: Iterable[FunctionSummary]) -> None:
        """Edges after some functions' bodies changed (their names and signatures did not, so the
        name index holds): the old versions' calls out, the new versions' in."""
        for fn in old:
            for callee in self._callees_of.pop(fn.qualname, ()):
                callers = self._callers.get(callee)
                if callers is not None:
                    callers.discard(fn.qualname)
        for fn in new:
            self._add_edges(fn)

    def _calls_a_value(self, fn: FunctionSummary, site: CallSite) -> bool:
        kind = site.callee[0]
        if kind in ("local", "global", "value"):
            return True
        # `self.fn()` with no method `fn`: the attribute's value is called (Interpreter.resolve_call)
        return kind == "self" and self.program.static_target(fn, site) is None

    def _callees(self, fn: FunctionSummary, site: CallSite, by_name: dict[str, set[str]]) -> Iterator[str]:
        """What the interpreter can resolve the site to (Interpreter.resolve_call): a dotted name,
        `self`/`super` methods through the class chain and variables bound by imports exactly as
        here; `obj.name()` by the object's type or module, known only by the name."""
        program = self.program
        target = program.static_target(fn, site)
        called = program.function_run(target) if target is not None else None
        if called is not None:
            yield called.qualname
        for method in program.self_call_targets(fn, site):
            yield method.qualname  # a subclass's override of `self.name()`
        kind = site.callee[0]
        spawn = program.catalog.spawners.get(site.callee[1]) if kind == "qual" else None
        if spawn is not None and spawn.function_position < len(site.args):
            # `mp.spawn(run, args=(...))` runs `run` with the process's rank first.
            function = site.args[spawn.function_position]
            if function[0] == "name":
                yield from by_name.get(function[1], ())
        if kind in ("attr", "local", "global"):
            yield from by_name.get(site.callee[-1], ())
        if kind == "attr":
            for hook in self._driven_hooks.get(site.callee[-1], ()):
                yield from by_name.get(hook, ())

    def callers_of(self, qual: str) -> set[str]:
        return self._callers.get(qual, set())

    def with_callers(self, seeds: Iterable[str]) -> set[str]:
        """The seeds and everything that may pass them arguments, transitively. Callers feed a
        function's runs only through the parameters they bind: one that takes none
        (`def get_group():`, a method of `self` alone) runs alike from anywhere, and has no edges."""
        found = set(seeds)
        queue = deque(found)
        while queue:
            qual = queue.popleft()
            for caller in self._callers.get(qual, ()):
                if caller not in found:
                    found.add(caller)
                    queue.append(caller)
        return found


def binds_a_parameter(site: CallSite, fn: FunctionSummary) -> bool:
    """Whether the call, were it resolved to `fn`, would bind one of its parameters: by position,
    or by a keyword that names one (exactly as `Interpreter._bind_args` binds them; starred
    arguments bind nothing there). A call that binds none records nothing in `fn`'s bindings."""
    params = fn.caller_params()
    if not params:
        return False
    if site.args:
        return True
    return any(name in params for name, _ in site.kwargs)


def _value_names(fn: FunctionSummary) -> Iterator[str]:
    """Names a function's code reads as values (`x`, `obj.x`, a nested `def x`), not as callees."""
    bases = tuple(site.callee[1] for site in fn.calls if site.callee[0] in ("attr", "value"))
    parts = (fn.body, tuple(site.args for site in fn.calls), tuple(site.kwargs for site in fn.calls), bases)
    for node in walk_tuples(parts):
        tag = node[0]
        if tag == "name" and len(node) == 2 and isinstance(node[1], str):
            yield node[1]
        elif tag == "attr" and len(node) == 3 and isinstance(node[2], str):
            yield node[2]
        elif tag == "def" and len(node) == 3 and isinstance(node[1], str):
            yield node[1]
