"""link: the whole program from module summaries.

Resolves dotted names across modules (imports, re-exports, classes and their project bases), builds
the call graph, and runs the fixpoint that marks every function that reaches a collective, keeping
one shortest witness chain per function for the report.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Tuple

from rankcheck.catalog import Catalog, CollectiveSpec
from rankcheck.ir import CallSite, ClassSummary, FunctionSummary, ModuleSummary

_MAX_ALIAS_HOPS = 12


@dataclass(frozen=True)
class Target:
    """What a dotted name turned out to be."""

    kind: str  # function | class | collective | rank_call | predicate_call | exit | module | external
    qualname: str
    function: Optional[FunctionSummary] = None
    klass: Optional[ClassSummary] = None
    collective: Optional[CollectiveSpec] = None
    detail: object = None  # rank kind for rank_call, predicate tuple for predicate_call


@dataclass(frozen=True)
class Reach:
    """A function reaches a collective: `depth` calls down, first through `site`."""

    depth: int
    site: CallSite
    target: Target


class Program:
    def __init__(self, summaries: Iterable[ModuleSummary], catalog: Catalog) -> None:
        self.catalog = catalog
        self.modules: Dict[str, ModuleSummary] = {}
        self.functions: Dict[str, FunctionSummary] = {}
        self.classes: Dict[str, ClassSummary] = {}
        self.path_of_function: Dict[str, str] = {}
        for summary in summaries:
            if summary.problem is not None:
                continue
            # Two scripts with one name in different folders: the first keeps the bare name.
            if summary.module in self.modules:
                continue
            self.modules[summary.module] = summary
            for fn in summary.functions:
                self.functions[fn.qualname] = fn
                self.path_of_function[fn.qualname] = summary.path
            for cls in summary.classes:
                self.classes[cls.qualname] = cls
        self._imports = {name: dict(m.imports) for name, m in self.modules.items()}
        self._resolve_cache: Dict[str, Target] = {}
        self.reach: Dict[str, Reach] = {}
        self._compute_reach()

    # ------------------------------------------------------------------ names
    def resolve(self, qualname: str) -> Target:
        cached = self._resolve_cache.get(qualname)
        if cached is None:
            cached = self._resolve(qualname, 0)
            self._resolve_cache[qualname] = cached
        return cached

    def _resolve(self, qualname: str, hops: int) -> Target:
        catalog = self.catalog
        if qualname in self.functions:
            return Target("function", qualname, function=self.functions[qualname])
        if qualname in self.classes:
            return Target("class", qualname, klass=self.classes[qualname])
        spec = catalog.collective(qualname)
        if spec is not None:
            return Target("collective", qualname, collective=spec)
        if qualname in catalog.rank_calls:
            return Target("rank_call", qualname, detail=catalog.rank_calls[qualname])
        if qualname in catalog.predicate_calls:
            return Target("predicate_call", qualname, detail=catalog.predicate_calls[qualname])
        if qualname in catalog.exit_calls:
            return Target("exit", qualname)
        if qualname in self.modules:
            return Target("module", qualname)
        if hops >= _MAX_ALIAS_HOPS:
            return Target("external", qualname)
        # Longest project module that prefixes the name; follow what that module binds the rest to.
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module not in self.modules:
                continue
            head, rest = parts[cut], parts[cut + 1 :]
            bound = self._imports[module].get(head)
            if bound is not None and bound != ".".join(parts[: cut + 1]):
                return self._resolve(".".join([bound] + rest), hops + 1)
            # `Class.method` through project base classes
            cls_qual = ".".join(parts[: cut + 1])
            if cls_qual in self.classes and len(rest) == 1:
                method = self.find_method(cls_qual, rest[0])
                if method is not None:
                    return Target("function", method.qualname, function=method)
            break
        return Target("external", qualname)

    def find_method(self, class_qualname: str, name: str, skip_self: bool = False) -> Optional[FunctionSummary]:
        """Method lookup through the class and its project base classes (depth-first MRO)."""
        seen = set()
        stack = [class_qualname]
        first = True
        while stack:
            current = stack.pop(0)
            if current in seen:
                continue
            seen.add(current)
            cls = self.classes.get(current)
            if cls is None:
                continue
            if not (first and skip_self):
                for method_name, qual in cls.methods:
                    if method_name == name and qual in self.functions:
                        return self.functions[qual]
            first = False
            bases = []
            for base in cls.bases:
                target = self.resolve(base)
                if target.kind == "class":
                    bases.append(target.qualname)
            stack = bases + stack
        return None

    def class_chain(self, class_qualname: str) -> List[ClassSummary]:
        out: List[ClassSummary] = []
        seen = set()
        stack = [class_qualname]
        while stack:
            current = stack.pop(0)
            if current in seen or current not in self.classes:
                continue
            seen.add(current)
            cls = self.classes[current]
            out.append(cls)
            stack.extend(t.qualname for t in (self.resolve(b) for b in cls.bases) if t.kind == "class")
        return out

    def static_target(self, fn: FunctionSummary, site: CallSite) -> Optional[Target]:
        """The callee as far as it is known without following values (used by the reach fixpoint)."""
        kind = site.callee[0]
        if kind == "qual":
            return self.resolve(site.callee[1])
        if kind in ("self", "super") and fn.class_qualname:
            method = self.find_method(fn.class_qualname, site.callee[1], skip_self=(kind == "super"))
            if method is not None:
                return Target("function", method.qualname, function=method)
            return None
        if kind == "global":
            bound = self._imports.get(fn.module, {}).get(site.callee[1])
            return self.resolve(bound) if bound else None
        return None

    # ------------------------------------------------------------------ reach fixpoint
    def _compute_reach(self) -> None:
        callers: Dict[str, List[Tuple[FunctionSummary, CallSite, Target]]] = {}
        queue: deque = deque()
        for fn in self.functions.values():
            for site in fn.calls:
                target = self.static_target(fn, site)
                if target is None:
                    continue
                if target.kind == "collective":
                    current = self.reach.get(fn.qualname)
                    if current is None or current.depth > 1:
                        self.reach[fn.qualname] = Reach(1, site, target)
                        queue.append(fn.qualname)
                elif target.kind == "function":
                    callers.setdefault(target.qualname, []).append((fn, site, target))
                elif target.kind == "class":
                    init = self.find_method(target.qualname, "__init__")
                    if init is not None:
                        callers.setdefault(init.qualname, []).append((fn, site, Target("function", init.qualname, function=init)))
        # Breadth-first from the functions that call a collective directly: shortest chains first,
        # and recursion or import cycles end because a function is marked once.
        while queue:
            callee = queue.popleft()
            depth = self.reach[callee].depth
            for caller, site, target in callers.get(callee, ()):
                if caller.qualname not in self.reach:
                    self.reach[caller.qualname] = Reach(depth + 1, site, target)
                    queue.append(caller.qualname)

    def reaches(self, qualname: str) -> bool:
        return qualname in self.reach

    def witness(self, qualname: str) -> List[Tuple[FunctionSummary, CallSite, Target]]:
        """The shortest call chain from `qualname` down to a real collective."""
        chain = []
        seen = set()
        current = qualname
        while current in self.reach and current not in seen:
            seen.add(current)
            r = self.reach[current]
            chain.append((self.functions[current], r.site, r.target))
            if r.target.kind != "function":
                break
            current = r.target.qualname
        return chain
