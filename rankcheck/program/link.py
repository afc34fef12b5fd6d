"""link: the whole program from module summaries.

Resolves dotted names across modules (imports, re-exports, classes and their project bases) and
builds the static call graph; `callgraph` runs its fixpoints: which functions reach a collective
(one shortest witness chain each, for the report) and the recursive cycles (its strongly
connected components) that the interpreter does not follow around.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple, cast

from rankcheck.catalog import BackendSpec, Catalog, CollectiveSpec
from rankcheck.program.callgraph import Reach, shortest_reach, strongly_connected
from rankcheck.program.ir import STAR_IMPORT, CallSite, ClassSummary, Expr, FunctionSummary, ModuleSummary, statements, walk_tuples

_MAX_ALIAS_HOPS = 12
_NOT_RECURSIVE: FrozenSet[str] = frozenset()


@dataclass(frozen=True)
class Target:
    """What a dotted name turned out to be."""

    kind: str  # function | class | collective | rank_call | predicate_call | exit | module | external
    qualname: str
    function: Optional[FunctionSummary] = None
    klass: Optional[ClassSummary] = None
    collective: Optional[CollectiveSpec] = None
    detail: object = None  # rank kind for rank_call, predicate tuple for predicate_call


MAX_OVERRIDES = 8  # past this many subclasses defining a hook, `self.hook()` is the class's own
MAX_HANDLERS = 24  # past this many methods, `getattr(self, name)` is not followed (Program.named_handlers)


class Program:
    def __init__(self, summaries: Iterable[ModuleSummary], catalog: Catalog, test_modules: FrozenSet[str] = frozenset()) -> None:
        self.catalog = catalog
        # Modules that are test code: read for context, but what they pass to the other modules'
        # functions does not count among what those are given (interp.rounds).
        self.test_modules = test_modules
        self.modules: Dict[str, ModuleSummary] = {}
        self.functions: Dict[str, FunctionSummary] = {}
        self.classes: Dict[str, ClassSummary] = {}
        self.path_of_function: Dict[str, str] = {}
        # Summaries whose module name an earlier one took (discovery gives every file a name of
        # its own, `driver.identity`: only summaries made by hand can collide): (name, path).
        self.collisions: List[Tuple[str, str]] = []
        for summary in summaries:
            if summary.problem is not None:
                continue
            if summary.module in self.modules:
                self.collisions.append((summary.module, summary.path))
                continue
            self.modules[summary.module] = summary
            for fn in summary.functions:
                self.functions[fn.qualname] = fn
                self.path_of_function[fn.qualname] = summary.path
            for cls in summary.classes:
                self.classes[cls.qualname] = cls
        self._imports = {name: dict(m.imports) for name, m in self.modules.items()}
        self._resolve_cache: Dict[str, Target] = {}
        self._framework_names: Optional[Tuple[Dict[Tuple[str, ...], str], FrozenSet[str]]] = None
        # Module -> the names whose cached target holds one of its functions or classes (an edit
        # of the module swaps their summaries in: `_refresh_targets`).
        self._resolved_into: Dict[str, List[str]] = {}
        self._reach: Optional[Dict[str, Reach]] = None
        self._cycles: Optional[Dict[str, FrozenSet[str]]] = None
        self._callees: Optional[Dict[str, List[str]]] = None  # the static call graph, for the cycles
        # The cycles before edits changed the call graph, until `cycle_changes` is asked.
        self._cycles_before: Optional[Dict[str, FrozenSet[str]]] = None
        # Method name -> the one project method a call of it on a value of unknown type stands
        # for, or None (`sole_method`). Built from the classes' interfaces, which edits keep.
        self._sole_methods: Optional[Dict[str, Optional[str]]] = None
        # Class -> its project subclasses (not test code's), for `overrides`.
        self._subclasses: Optional[Dict[str, List[str]]] = None
        # (class, method name) -> the qualnames `overrides` found (interfaces only: edits keep it).
        self._overrides: Dict[Tuple[str, str], Tuple[str, ...]] = {}
        self._shards: Optional[bool] = None  # `shards_parameters`, once asked
        self._sharding_components: Optional[Dict[str, bool]] = None  # `shards_parameters_in`, once asked
        # `runs_under`, once asked: module -> the modules importing it; a module's own backend
        # names; the backends named by a module or its importers.
        self._importers: Optional[Dict[str, Set[str]]] = None
        self._module_backends: Dict[str, FrozenSet[str]] = {}
        self._backends_named: Dict[str, FrozenSet[str]] = {}
        self._refused: Dict[Tuple[str, str], bool] = {}  # (module, backend) -> `_refuses`
        # Function -> {local name: the attribute of `self` whose submodule it holds} (`submodule_locals`).
        self._submodule_locals: Dict[str, Dict[str, str]] = {}
        # Class -> how many call sites in the project build it by name (`construction_sites`).
        self._constructions: Optional[Dict[str, int]] = None

    # ------------------------------------------------------------------ edits
    def replace_modules(self, summaries: Iterable[ModuleSummary]) -> Optional[Tuple[List[FunctionSummary], List[FunctionSummary]]]:
        """Take in new summaries of modules already linked whose interface (`interface`) is
        unchanged: the language server's edit inside function bodies. Returns the functions
        replaced and their replacements; None, with nothing changed, when an interface differs
        (then the program has to be linked again)."""
        taken = []
        for summary in summaries:
            current = self.modules.get(summary.module)
            if current is None or current.path != summary.path or interface(current) != interface(summary):
                return None
            if current is not summary:
                taken.append((current, summary))
        if taken and self.catalog.sharded_forward is not None and self._shards is not None:
            # Whether the project shards parameters decides what every module's submodule calls
            # do: an edit that changes it (a call of `deepspeed.initialize` added) needs a relink.
            if any(self._names_sharding(summary) for _, summary in taken) != any(self._names_sharding(current) for current, _ in taken):
                return None
        if taken and (self._module_backends or self._refused):
            # Which sharded backends a program names, and what it hands the calls that refuse one,
            # decide which framework calls communicate there (`runs_under`): an edit that changes
            # either needs a relink.
            if any(self._names_backends(summary) != self._names_backends(current)
                   or self._handed_models(summary) != self._handed_models(current) for current, summary in taken):
                return None
        old: List[FunctionSummary] = []
        new: List[FunctionSummary] = []
        for current, summary in taken:
            self.modules[summary.module] = summary
            for fn in current.functions:
                old.append(fn)
            for fn in summary.functions:
                self.functions[fn.qualname] = fn
                new.append(fn)
            for cls in summary.classes:
                self.classes[cls.qualname] = cls
        if taken:
            replaced = {summary.module for _, summary in taken}
            for fn in old:
                self._submodule_locals.pop(fn.qualname, None)
            self._refresh_targets(replaced)
            self._refresh_call_graph(old, new)
            self._constructions = None
        return old, new

    def _refresh_targets(self, modules: set) -> None:
        """Resolved names keep their targets (the interfaces are the same); those that hold a
        function or class of a replaced module get its new summary."""
        cache = self._resolve_cache
        for module in modules:
            for name in self._resolved_into.get(module, ()):
                target = cache[name]
                if target.function is not None:
                    cache[name] = dataclasses.replace(target, function=self.functions[target.qualname])
                elif target.klass is not None:
                    cache[name] = dataclasses.replace(target, klass=self.classes[target.qualname])

    def _refresh_call_graph(self, old: List[FunctionSummary], new: List[FunctionSummary]) -> None:
        """Which functions reach a collective, and through which call, and which call each other
        back, depend on what each call site resolves to, in order. When the replaced functions
        resolve their calls exactly as before (an edit that adds no call), only their own call
        sites are new objects: swap them in. Otherwise compute both again when next asked."""
        if self._callees is not None:
            for fn in new:
                self._callees[fn.qualname] = self._static_callees(fn)
        if self._reach is None and self._cycles is None:
            return
        before = {fn.qualname: fn for fn in old}
        for fn in new:
            previous = before.get(fn.qualname)
            if previous is None or self._call_profile(previous) != self._call_profile(fn):
                self._reach = None
                if self._cycles is not None:
                    if self._cycles_before is None:
                        self._cycles_before = self._cycles
                    self._cycles = None
                return
        if self._reach is None:
            return
        for fn in new:
            if self.functions.get(fn.qualname) is not fn:
                continue  # one of two functions of one name (`def closure` in two branches): not the one kept
            reached = self._reach.get(fn.qualname)
            if reached is not None:
                index = next(i for i, site in enumerate(before[fn.qualname].calls) if site is reached.site)
                self._reach[fn.qualname] = Reach(reached.depth, fn.calls[index], reached.target)

    def _call_profile(self, fn: FunctionSummary) -> Tuple:
        out = []
        for site in fn.calls:
            target = self.static_target(fn, site)
            out.append(None if target is None else (target.kind, target.qualname))
        return tuple(out)

    # ------------------------------------------------------------------ names
    def resolve(self, qualname: str) -> Target:
        cached = self._resolve_cache.get(qualname)
        if cached is None:
            cached = self._resolve(qualname, 0)
            self._resolve_cache[qualname] = cached
            held = cached.function if cached.function is not None else cached.klass
            if held is not None:
                self._resolved_into.setdefault(held.module, []).append(qualname)
        return cached

    def _resolve(self, qualname: str, hops: int) -> Target:
        catalog = self.catalog
        if self._framework_names is None:
            self._framework_names = self._framework_index()
        # What the catalog knows of a name wins even where the project defines it (a vendored
        # copy), but not in the framework's own repository where it asks for its code to be read.
        own_code = qualname in self.functions and qualname.split(".", 1)[0] in catalog.own_packages
        if qualname in self._framework_names[1] and not own_code:
            return self._framework_target(qualname)
        if qualname in self.functions:
            fn = self.functions[qualname]
            copied = self._framework_names[0].get(tuple(qualname.rsplit(".", 2)[-2:])) if fn.class_qualname is None and not own_code else None
            if copied is None and fn.class_qualname is None and not own_code:
                copied = self._reexported_framework_name(qualname)
            if copied is not None:
                return self._framework_target(copied)
            return Target("function", qualname, function=fn)
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
            star = self._imports[module].get(STAR_IMPORT)
            if bound is None and star is not None and cls_qual not in self.classes and head not in self.modules[module].global_names:
                # A name the module neither defines nor imports by name: its `from m import *`
                # (`nanotron.distributed.all_reduce` is `torch.distributed.all_reduce`).
                return self._resolve(".".join([star, head] + rest), hops + 1)
            break
        return Target("external", qualname)

    def _reexported_framework_name(self, qualname: str) -> Optional[str]:
        """The catalog's name of a project function its package re-exports: Megatron's
        `megatron/mpu/__init__.py` imports `get_tensor_model_parallel_group` from
        `.initialize`, so the catalog's `megatron.mpu.get_tensor_model_parallel_group` is the
        function `megatron.mpu.initialize` defines, as its own package's code calls it."""
        module, _, name = qualname.rpartition(".")
        package = module.rpartition(".")[0]
        if not package or package not in self.modules:
            return None
        imports = self._imports.get(package, {})
        if imports.get(name) != qualname and imports.get(STAR_IMPORT) != module:
            return None
        return self._framework_names[0].get((package.rpartition(".")[2], name)) if self._framework_names is not None else None

    def _framework_target(self, name: str) -> Target:
        """What the catalog says of a function whose meaning it holds, where the project defines
        it too: Megatron-LM defines `megatron.core.parallel_state`, and forks vendor it whole
        (`domino/parallel_state.py`). What the catalog knows beyond the body (which rank dimension
        a getter returns, which group's members share a test) wins: by the full name, else by
        module and function name (`parallel_state.get_data_parallel_group`)."""
        catalog = self.catalog
        if name in catalog.rank_calls:
            return Target("rank_call", name, detail=catalog.rank_calls[name])
        if name in catalog.predicate_calls:
            return Target("predicate_call", name, detail=catalog.predicate_calls[name])
        return Target("external", name)  # a group getter, a membership test: `Calls._external_call`

    def _framework_index(self) -> Tuple[Dict[Tuple[str, ...], str], FrozenSet[str]]:
        """(module's last name, function name) -> the catalog name, and the names, of what the
        catalog holds the meaning of: rank sources and tests, group getters and membership tests."""
        catalog = self.catalog
        names = [
            *catalog.rank_calls,
            *catalog.predicate_calls,
            *catalog.uniform_in_group,
            *catalog.group_membership,
            *catalog.group_membership.values(),
            *catalog.group_source_ranks,
        ]
        index: Dict[Tuple[str, ...], str] = {}
        for name in sorted(names):
            parts = name.split(".")
            if len(parts) >= 3:
                index.setdefault(tuple(parts[-2:]), name)
        return index, frozenset(names)

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

    def sole_method(self, name: str) -> Optional[FunctionSummary]:
        """The method a call `x.name(...)` on a value of unknown type stands for: the project's
        definition of `name` when every class outside the tests that defines it is the same class
        or a subclass of it (`FairseqTask.get_batch_iterator` and its overrides), that class's.
        None when two unrelated classes define it, and for the names objects of libraries have
        too: the methods of Python's built-in types, `[dispatch] library_methods`, and every
        method name the catalogue knows, of framework types or by name (`group.rank()`, `.to()`)."""
        if self._sole_methods is None:
            self._sole_methods = self._index_sole_methods()
        qual = self._sole_methods.get(name)
        return self.functions.get(qual) if qual is not None else None

    def _index_sole_methods(self) -> Dict[str, Optional[str]]:
        catalog = self.catalog
        # Every name the catalogue treats by method name: the analysis of the call as a library's
        # (`x.to(device)`, `lst.extend(xs)`, `t.view(n)`) must not give way to a project class's.
        taken = set(_BUILTIN_METHODS).union(
            catalog.library_methods, catalog.predicate_methods, catalog.staggered_contexts, catalog.rank_call_names,
            catalog.self_methods, catalog.placement_methods, catalog.container_mutators, catalog.container_adders,
            catalog.shape_sharders, catalog.shape_reducers, catalog.shape_reshapers, catalog.shape_measures,
            catalog.shape_keepers, catalog.shape_like,
        )
        for spec in catalog.types.values():
            taken |= set(spec.methods) | set(spec.reads) | spec.quiet | spec.uneven_ok | spec.rank_zero_methods | spec.wraps
        definers: Dict[str, List[Tuple[str, str]]] = {}
        for cls in self.classes.values():
            if cls.module in self.test_modules:
                continue
            for method_name, qual in cls.methods:
                if method_name not in taken and not method_name.startswith("__") and qual in self.functions:
                    definers.setdefault(method_name, []).append((cls.qualname, qual))
        index: Dict[str, Optional[str]] = {}
        for method_name, defined in definers.items():
            chains = [{c.qualname for c in self.class_chain(cls_qual)} for cls_qual, _ in defined]
            root = next((qual for (cls_qual, qual) in defined if all(cls_qual in chain for chain in chains)), None)
            index[method_name] = root
        return index

    # ------------------------------------------------------------------ parameter sharding
    @property
    def shards_parameters(self) -> bool:
        """Whether the project may shard its models' parameters (ZeRO-3, FSDP): a module imports
        or calls one of the catalog's `sharding_evidence` names."""
        if self._shards is None:
            self._shards = self.catalog.sharded_forward is not None and any(self._names_sharding(m) for m in self.modules.values())
        return self._shards

    def shards_parameters_in(self, module: str) -> bool:
        """Whether the program `module` belongs to may shard its models' parameters: a module
        joined to it by imports, either way and through any number of modules, names one of the
        catalog's `sharding_evidence` names. A tree of independent scripts (a collection of
        examples) holds several programs; a DCGAN script beside an FSDP one shards nothing."""
        if not self.shards_parameters:
            return False
        if self._sharding_components is None:
            self._sharding_components = self._sharding_by_component()
        return self._sharding_components.get(module, True)

    def runs_under(self, module: str, backend: str) -> bool:
        """Whether the program `module` belongs to may run under the sharded backend (Catalog.
        backends). The program is `module` and the modules that import it, at any depth: the
        scripts and set-up code that choose the backend import the code that runs under it; what
        `module` itself imports (a library of the project: diffusers' own `training_utils`, which
        wraps with FSDP for the scripts that ask) chooses nothing.
        A backend a launcher applies to an unchanged script (DeepSpeed) counts for any program but
        one that hands every call refusing it two models (accelerate's `prepare` of a VAE and its
        discriminator); another (FSDP) only for a program that names it somewhere (an import, an
        attribute, a flag, an option string: `fsdp_plugin`, `--fsdp`)."""
        spec = self.catalog.backends.get(backend)
        if spec is None:
            return False
        if spec.assumed:
            refused = self._refused.get((module, backend))
            if refused is None:
                refused = self._refused[module, backend] = self._refuses(spec, self._program_of(module))
            return not refused
        named = self._backends_named.get(module)
        if named is None:
            found: Set[str] = set()
            for summary in self._program_of(module):
                if summary.module not in self._module_backends:
                    self._module_backends[summary.module] = self._names_backends(summary)
                found |= self._module_backends[summary.module]
            named = self._backends_named[module] = frozenset(found)
        return backend in named

    def _program_of(self, module: str) -> List[ModuleSummary]:
        """`module` and the modules that import it, at any depth."""
        if self._importers is None:
            self._importers = {}
            for name, summary in self.modules.items():
                for _, dotted in summary.imports:
                    target = self._project_module_of(dotted)
                    if target is not None and target != name:
                        self._importers.setdefault(target, set()).add(name)
        seen, todo = {module}, [module]
        while todo:
            for importer in self._importers.get(todo.pop(), ()):
                if importer not in seen:
                    seen.add(importer)
                    todo.append(importer)
        return [self.modules[name] for name in sorted(seen) if name in self.modules]

    def _refuses(self, spec: BackendSpec, summaries: Iterable[ModuleSummary]) -> bool:
        """Whether the backend's `one_model_calls` are called, each with two models or more."""
        if not spec.one_model_calls:
            return False
        handed = [models for summary in summaries for method, models in self._handed_models(summary) if method in spec.one_model_calls]
        return bool(handed) and all(models is not None and sum(
            not any(word in name.lower() for word in spec.not_models) for name in models) >= 2 for models in handed)

    def _handed_models(self, summary: ModuleSummary) -> Tuple[Tuple[str, Optional[Tuple[str, ...]]], ...]:
        """(method, the names of the plain arguments) of each method call of a module whose method
        refuses a backend when handed several models; None where a spread hands over more."""
        methods = {m for spec in self.catalog.backends.values() for m in spec.one_model_calls}
        found: List[Tuple[str, Optional[Tuple[str, ...]]]] = []
        for fn in summary.functions:
            for site in fn.calls:
                method = site.text.rsplit(".", 1)[-1]
                if "." in site.text and method in methods:
                    names = None if site.spreads or site.has_star else tuple(
                        str(arg[-1]) for arg in site.args if arg[0] in ("name", "attr"))
                    found.append((method, names))
        return tuple(found)

    def _names_backends(self, summary: ModuleSummary) -> FrozenSet[str]:
        """The backends of the catalog whose words a module's imports, call texts, names,
        attributes or strings hold."""
        texts: Set[str] = {dotted.lower() for _, dotted in summary.imports} | {alias.lower() for alias, _ in summary.imports}
        for fn in summary.functions:
            texts.update(site.text.lower() for site in fn.calls)
            for node in walk_tuples((fn.body, tuple((site.args, site.kwargs) for site in fn.calls))):
                text = node[-1] if node[0] in ("name", "const", "attr") else None
                # A string counts as a word (`"fsdp_plugin"`, `"--use_fsdp"`), not as prose: a
                # docstring that mentions FSDP does not run under it.
                if isinstance(text, str) and not (node[0] == "const" and (any(c.isspace() for c in text) or len(text) > 64)):
                    texts.add(text.lower())
        return frozenset(name for name, spec in self.catalog.backends.items() if any(word in text for text in texts for word in spec.words))

    def _import_components(self) -> Dict[str, str]:
        """Module -> a name for the group of modules joined to it by imports, either way."""
        parent = {name: name for name in self.modules}

        def root(name: str) -> str:
            while parent[name] != name:
                parent[name] = parent[parent[name]]
                name = parent[name]
            return name

        for name, summary in self.modules.items():
            for _, dotted in summary.imports:
                target = self._project_module_of(dotted)
                if target is not None:
                    parent[root(target)] = root(name)
        return {name: root(name) for name in self.modules}

    def _sharding_by_component(self) -> Dict[str, bool]:
        roots = self._import_components()
        components: Dict[str, List[ModuleSummary]] = {}
        for name, summary in self.modules.items():
            components.setdefault(roots[name], []).append(summary)
        catalog = self.catalog
        sharding: Set[str] = set()
        for component, summaries in components.items():
            named = frozenset().union(*(self._sharding_names(summary) for summary in summaries))
            if not named:
                continue
            if named - catalog.staged_sharding_evidence:
                sharding.add(component)
                continue
            # Only evidence that shards from a stage on (`deepspeed.initialize`): it does unless
            # every stage the component writes is a constant below that one.
            written = {stage for summary in summaries for stage in _written_stages(summary, catalog.sharding_stage_key)}
            if not written or None in written or max(cast(Set[int], written)) >= catalog.sharding_stage:
                sharding.add(component)
        return {name: roots[name] in sharding for name in self.modules}

    def _project_module_of(self, dotted: str) -> Optional[str]:
        """The project module a dotted import names, or that holds what it names."""
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            candidate = ".".join(parts[:end])
            if candidate in self.modules:
                return candidate
        return None

    def _names_sharding(self, summary: ModuleSummary) -> bool:
        return bool(self._sharding_names(summary))

    def _sharding_names(self, summary: ModuleSummary) -> FrozenSet[str]:
        """The catalog's sharding evidence the module imports or calls."""
        evidence = self.catalog.sharding_evidence
        named = {dotted for _, dotted in summary.imports if dotted in evidence}
        named.update(site.callee[1] for fn in summary.functions for site in fn.calls if site.callee[0] == "qual" and site.callee[1] in evidence)
        return frozenset(named)

    def is_module_class(self, class_qualname: str) -> bool:
        """A project subclass of nn.Module (catalog `module_bases`), directly or through its bases."""
        bases = self.catalog.module_bases
        return any(self.resolve(base).qualname in bases for cls in self.class_chain(class_qualname) for base in cls.bases)

    def stored_attribute(self, class_qualname: str, attr: str) -> bool:
        """Whether a method of the class (or of a project base class) stores `self.<attr>`."""
        return any(name == attr for cls in self.class_chain(class_qualname) for name, _ in cls.self_stores)

    def sharded_call(self, fn: FunctionSummary, site: CallSite) -> Optional[str]:
        """The attribute of `self` whose submodule the call runs, when that forward gathers sharded
        parameters: in a project that shards them, a method of an nn.Module subclass calling
        `self.vision_tower(x)`, `self.experts[i](x)`, or a local holding one of those
        (`expert = self.experts[i]`, `for layer in self.layers:`), where the attribute is stored
        by the class and is not one of its methods. None otherwise."""
        cls = fn.class_qualname
        if cls is None or not self.shards_parameters_in(fn.module):
            return None
        kind = site.callee[0]
        attr: Optional[str] = None
        if kind == "self":
            attr = site.callee[1]
        elif kind == "value":
            attr = _indexed_self_attribute(site.callee[1])
        elif kind == "local":
            attr = self.submodule_locals(fn).get(site.callee[1])
        if attr is None or not self.stored_attribute(cls, attr) or self.find_method(cls, attr) is not None:
            return None
        if not self.is_module_class(cls) or self._holds_no_parameters(cls, attr):
            return None
        return attr

    def _holds_no_parameters(self, class_qualname: str, attr: str) -> bool:
        """Whether every store of `self.<attr>` in the class puts there something whose forward
        has no parameters to gather: a module of the catalog's `parameter_free_modules`
        (`nn.Dropout(p)`, `nn.GELU()`), or a function named by reference (`self.act = F.gelu`)."""
        free = self.catalog.parameter_free_modules
        stores = 0
        for cls in self.class_chain(class_qualname):
            for method in (q for name, quals in cls.self_stores if name == attr for q in quals):
                fn = self.functions.get(method)
                if fn is None:
                    return False
                for stmt in statements(fn.body):
                    if stmt[0] != "assign" or ("selfattr", attr) not in stmt[1]:
                        continue
                    stores += 1
                    value = stmt[2]
                    if value[0] == "call" and value[1] < len(fn.calls) and fn.calls[value[1]].callee[0] == "qual":
                        if self.resolve(fn.calls[value[1]].callee[1]).qualname in free:
                            continue
                    elif value[0] == "attr" and cast(str, value[2])[:1].islower() and value[1][0] == "name" and value[1][1] != "self":
                        continue  # `F.gelu`, `torch.tanh`: a function, not a module
                    return False
        return stores > 0

    def submodule_locals(self, fn: FunctionSummary) -> Dict[str, str]:
        """The locals of a method that hold an item of a `self` attribute: `x = self.a[i]`,
        `for x in self.a:`, `for i, x in enumerate(self.a):` (local name -> `a`)."""
        known = self._submodule_locals.get(fn.qualname)
        if known is not None:
            return known
        found: Dict[str, str] = {}
        counters = self.catalog.iteration_counters
        for stmt in statements(fn.body):
            if stmt[0] == "assign" and len(stmt[1]) == 1 and stmt[1][0][0] == "name":
                attr = _indexed_self_attribute(stmt[2])
                if attr is not None:
                    found[stmt[1][0][1]] = attr
            elif stmt[0] == "for":
                target, iterable = stmt[1], stmt[2]
                attr = _self_attribute(iterable)
                if attr is None and iterable[0] == "call" and iterable[1] < len(fn.calls):
                    site = fn.calls[iterable[1]]
                    if site.callee[0] == "qual" and site.callee[1] in counters and len(site.args) == 1:
                        attr = _self_attribute(site.args[0])
                        target = target[1][1] if target[0] == "unpack" and len(target[1]) == 2 else None
                if attr is not None and target is not None and target[0] == "name":
                    found[target[1]] = attr
        self._submodule_locals[fn.qualname] = found
        return found

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

    def overrides(self, class_qualname: str, name: str) -> List[FunctionSummary]:
        """The methods named `name` that project subclasses of the class define themselves (test
        code's left out): what `self.name()` in the class may run on an instance of one of them.
        None past MAX_OVERRIDES: a base class of a whole framework (a module of every model)."""
        key = (class_qualname, name)
        if key not in self._overrides:
            defined = [dict(self.classes[sub].methods).get(name) for sub in sorted(self._subclass_map().get(class_qualname, ()))]
            quals = tuple(q for q in defined if q is not None)
            self._overrides[key] = quals if len(quals) <= MAX_OVERRIDES else ()
        # Looked up now: an edit inside a body swaps the summaries, not the names.
        return [self.functions[q] for q in self._overrides[key] if q in self.functions]

    def has_subclasses(self, class_qualname: str) -> bool:
        """Whether a project class (test code's left out) derives from the class."""
        return bool(self._subclass_map().get(class_qualname))

    def _subclass_map(self) -> Dict[str, List[str]]:
        """Class -> its project subclasses, direct or not (test code's left out)."""
        if self._subclasses is None:
            found: Dict[str, List[str]] = {}
            for qual in self.classes:
                if self.classes[qual].module in self.test_modules:
                    continue
                for ancestor in self.class_chain(qual)[1:]:
                    found.setdefault(ancestor.qualname, []).append(qual)
            self._subclasses = found
        return self._subclasses

    def named_handlers(self, class_qualname: str, caller: str) -> List[FunctionSummary]:
        """What `getattr(self, name)(...)` may run when `name` is not written as a constant (an
        event dispatcher's `getattr(self, event)`): every public method of the class, as the class
        or a project subclass (test code's left out) defines it, that does some work (not a
        placeholder), other than the dispatching method `caller`. Empty past MAX_HANDLERS: a
        name picked from that many is not a dispatch this can follow."""
        classes = [cls.qualname for cls in self.class_chain(class_qualname)]
        classes += sorted(self._subclass_map().get(class_qualname, ()))
        found: Dict[str, FunctionSummary] = {}
        for qual in classes:
            for name, method_qual in self.classes[qual].methods:
                method = self.functions.get(method_qual)
                if method is None or name.startswith("_") or name == caller or self.placeholder(method):
                    continue
                found[method_qual] = method
        return [found[q] for q in sorted(found)] if len(found) <= MAX_HANDLERS else []

    def self_call_targets(self, fn: FunctionSummary, site: CallSite) -> List[FunctionSummary]:
        """`self.name()` in a method: each project subclass's override of `name` (the template
        method's hooks: `Trainer.fit` calling a subclass's `on_log`; a base trainer's validation
        step that a model family's trainer replaces with one computing its loss). The instance
        may be of any of them, so the class's own method, where it works, is one more that may
        run (Calls.resolve_call), not one that stands for the others."""
        if site.callee[0] != "self" or not fn.class_qualname:
            return []
        # An instance of a subclass that overrides the calling method too runs its own version
        # of it, not this one (mmengine's FSDPStrategy replaces both `save_checkpoint` and the
        # `optim_state_dict` the DDP strategy's rank-0 `save_checkpoint` calls).
        return [method for method in self.overrides(fn.class_qualname, site.callee[1])
                if method.class_qualname is None or _qualname(self.find_method(method.class_qualname, fn.name)) == fn.qualname]

    def placeholder(self, fn: FunctionSummary) -> bool:
        """A method body that leaves the work to overrides: only a docstring, `pass`, `...`,
        `return` / `return None`, or a raise of NotImplementedError."""
        for stmt in fn.body:
            if stmt[0] == "expr" and stmt[1][0] in ("const", "op") and not (stmt[1][0] == "op" and stmt[1][1]):
                continue  # a docstring, `...` (written as an empty operation)
            if stmt[0] == "exit" and stmt[1] == "return" and stmt[2] in (None, ("const", None)):
                continue
            if stmt[0] == "exit" and stmt[1] == "raise" and "NotImplementedError" in stmt[4]:
                continue
            return False
        return True

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
    @property
    def reach(self) -> Dict[str, Reach]:
        """Function -> how it reaches a collective (computed when first asked)."""
        if self._reach is None:
            self._reach = self._compute_reach()
        return self._reach

    def _compute_reach(self) -> Dict[str, Reach]:
        return shortest_reach(self)

    # ------------------------------------------------------------------ recursive cycles
    def recursive_cycle(self, qualname: str) -> FrozenSet[str]:
        """The functions of `qualname`'s recursive cycle in the static call graph (the edges of
        the reach fixpoint): those it can call that can call it back, itself included; empty for
        a function that cannot reach itself. All members of a cycle share one set."""
        if self._cycles is None:
            self._cycles = self._compute_cycles()
        return self._cycles.get(qualname, _NOT_RECURSIVE)

    def cycle_changes(self) -> List[str]:
        """The functions whose recursive cycle differs from what it was before the edits since
        the last time this was asked (an edit that adds or removes calls can change them)."""
        before, self._cycles_before = self._cycles_before, None
        if before is None:
            return []
        if self._cycles is None:
            self._cycles = self._compute_cycles()
        after = self._cycles
        return sorted(q for q in set(before) | set(after) if before.get(q, _NOT_RECURSIVE) != after.get(q, _NOT_RECURSIVE))

    def function_run(self, target: Target) -> Optional[FunctionSummary]:
        """The project function a call of `target` runs: the function, or a class's `__init__`."""
        if target.kind == "function":
            return target.function
        if target.kind == "class":
            return self.find_method(target.qualname, "__init__")
        return None

    def _static_callees(self, fn: FunctionSummary) -> List[str]:
        out = []
        for site in fn.calls:
            target = self.static_target(fn, site)
            called = self.function_run(target) if target is not None else None
            if called is not None:
                out.append(called.qualname)
            out.extend(method.qualname for method in self.self_call_targets(fn, site))
        return out

    def static_callees(self) -> Dict[str, List[str]]:
        """Function -> the project functions its calls resolve to without following values (the
        edges of the reach fixpoint and of the cycles)."""
        if self._callees is None:
            self._callees = {q: self._static_callees(fn) for q, fn in self.functions.items()}
        return self._callees

    def construction_sites(self, class_qualname: str) -> int:
        """How many call sites outside test code build the class by name (`DataProto(batch=b)`,
        `Meter()`): a record built all over the project, or an object set up once. (Tests build
        a trainer in every test; the job builds it once.)"""
        if self._constructions is None:
            counts: Dict[str, int] = {}
            for fn in self.functions.values():
                if fn.module in self.test_modules:
                    continue
                for site in fn.calls:
                    target = self.static_target(fn, site)
                    if target is not None and target.kind == "class":
                        counts[target.qualname] = counts.get(target.qualname, 0) + 1
            self._constructions = counts
        return self._constructions.get(class_qualname, 0)

    def declares_fields(self, class_qualname: str) -> bool:
        """The class's `__init__` is the one `@dataclass` writes from its annotated fields
        (frontend.lower gives it the class's own span): a record of values, not a component."""
        cls = self.classes.get(class_qualname)
        init = dict(cls.methods).get("__init__") if cls is not None else None
        fn = self.functions.get(init) if init is not None else None
        return fn is not None and cls is not None and fn.span == cls.span

    def _compute_cycles(self) -> Dict[str, FrozenSet[str]]:
        """The recursive cycles of the static call graph (its strongly connected components)."""
        return strongly_connected(list(self.functions), self.static_callees())

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


# What the objects of Python's built-in types answer to: `d.update(x)` on a dict of unknown type is
# not a project class's `update`.
_BUILTIN_METHODS = frozenset(
    name
    for kind in (object, list, dict, set, frozenset, tuple, str, bytes, bytearray, int, float, complex)
    for name in dir(kind)
)


def _self_attribute(expr: Expr) -> Optional[str]:
    """`self.<attr>` -> attr."""
    if expr[0] == "attr" and expr[1] == ("name", "self"):
        return cast(str, expr[2])
    return None


def _indexed_self_attribute(expr: Expr) -> Optional[str]:
    """`self.<attr>[i]` -> attr."""
    if expr[0] == "subscript" and not expr[3]:
        return _self_attribute(expr[1])
    return None


def interface(summary: ModuleSummary) -> Tuple:
    """What other modules can see of a module without running its code: where it is, what it
    imports and assigns at top level, its functions' names and signatures, its classes' bases and
    methods. Name resolution, the call graph's name index and the interpreter's binding of
    arguments read only these; an edit that keeps them changes function bodies alone."""
    return (
        summary.path,
        summary.module,
        summary.is_package,
        summary.problem is None,
        summary.imports,
        summary.global_names,
        tuple((f.qualname, f.name, f.class_qualname, f.params, f.decorators, f.is_generator, f.is_staticmethod) for f in summary.functions),
        tuple((c.qualname, c.name, c.bases, c.methods) for c in summary.classes),
    )


def _qualname(fn: Optional[FunctionSummary]) -> Optional[str]:
    return fn.qualname if fn is not None else None


def _written_stages(summary: ModuleSummary, key: Tuple[str, ...]) -> Set[Optional[int]]:
    """The stages a module's config displays write under `key` (Catalog.sharding_stage_key,
    `"zero_optimization": {"stage": 2}`): each constant, and None for one written otherwise
    (`args.zero_stage`)."""
    found: Set[Optional[int]] = set()
    if not key:
        return found
    for fn in summary.functions:
        for node in walk_tuples(fn.body):
            values = [node]
            for part in key:
                values = [inner for value in values for inner in _display_entries(value, part)]
            for stage in values:
                constant = stage[0] == "const" and isinstance(stage[1], int) and not isinstance(stage[1], bool)
                found.add(stage[1] if constant else None)
    return found


def _display_entries(node: tuple, key: str) -> List[tuple]:
    """The values a dict display (`("dict", ((key, value), ...))`) holds under a constant key."""
    if len(node) != 2 or node[0] != "dict" or not isinstance(node[1], tuple):
        return []
    return [entry[1] for entry in node[1]
            if isinstance(entry, tuple) and len(entry) == 2 and entry[0] == ("const", key) and isinstance(entry[1], tuple) and entry[1]]
