"""prefilter: which files can matter, decided from a cheap text scan before any parse.

Parsing is the dominant cost of a cold run (libcst is ~8x slower than `ast`). A file is parsed
when its text names something the analysis reads:

* a *seed*, from the catalog: collectives, framework types and functions, rank sources, rank
  predicates, exits, rank-zero-only decorators, per-rank data sources, plus `contextmanager`.
  A dotted name counts only together with all its middle components (`distributed` for
  `torch.distributed.reduce`, so `functools.reduce` does not count), or with a name some project
  file binds that module or function to (`from torch import distributed as dist` anywhere makes
  `dist` + `reduce` count; `from torch.distributed import reduce` in `comm.py` makes `comm` +
  `reduce` count). Rank attributes (`args.local_rank`) count only right after a dot.
* a *relevant project name*, found by linking what is parsed so far: a function that touches the
  catalog or calls (transitively, methods matched by name) one that does counts with its module's
  name (it can only be imported through it); a method counts by its name after any dot (its
  object may come from a caller); classes holding or deriving from such code, module globals
  assigned from it, and the aliases that re-export any of it count with their module's name.
* a skipped module that a parsed reference to a relevant name must pass through (a package
  `__init__` re-exporting it, a module binding `dist`): link cannot see through a minimal summary.

The relevant names grow to a fixpoint (`driver.selection.demand_driven` parses, links, asks again). Every
other file gets a minimal summary (module name and suppressions, after `compile()` agrees it is
valid Python). Per-rank data sources are seeds but are not followed to callers: a helper that only
forwards `random.random()` through a file naming nothing else is the known blind spot (one hop is
covered). Nothing here names a framework: the seeds come from the Catalog's fields, which
`SEED_FIELDS`/`IGNORED_FIELDS` classify (a test fails when a new field is in neither).

On training repositories the catalog's names alone select most of the source (87-90% of Megatron-LM
and accelerate, 76% of torchtitan, 53% of fairseq) and the fixpoint ends near all of it, so the
the summaries parse everything outright above `driver.summaries.DENSE_SEED_SHARE`; the prefilter pays off on
projects whose distributed part is small.
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque
from dataclasses import dataclass
from typing import (
    Dict,
    FrozenSet,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
)

from rankcheck.catalog import Catalog
from rankcheck.driver.identity import last_word, plain_name
from rankcheck.program.ir import FunctionSummary, statements, walk_tuples
from rankcheck.program.link import Program

# Catalog fields whose names, when a file mentions them, can make the file contribute: they issue
# collectives, type objects that do, or produce rank identity / per-rank data.
SEED_FIELDS = {
    "collectives": "name",
    "types": "name",
    "functions": "name",
    "rank_calls": "name",
    "rank_environ": "name",
    "rank_attributes": "attribute",  # `args.local_rank`: only as an attribute (a local `rank` is not a source)
    "predicate_attributes": "attribute",
    "predicate_calls": "name",
    "predicate_methods": "attribute",
    "staggered_contexts": "attribute",  # `with args.main_process_first():` on an object of any type
    "exit_calls": "name",
    "rank_zero_only": "name",
    "data_calls": "data",  # per-rank data: parsed where named, not followed to callers (module doc)
    "spawners": "name",  # `mp.spawn(train, ...)` binds the rank of another module's function
    "rank_call_names": "attribute",  # `hvd.rank()`: only after a dot
}
# Catalog fields that only refine how code already selected is judged (shapes of values, loop
# wrappers, contexts, group membership): a file naming only these cannot produce a finding.
IGNORED_FIELDS = (
    "fingerprint",
    "seed_keywords",  # a rank given as a seed is per-rank data: the rank must be there already
    "seed_calls",
    "stream_keywords",  # a draw from a stream of its own: the stream's seed must vary already
    "reseeders",
    "stream_types",
    "uniform_methods",  # `x.dim()`: makes a value uniform, never a finding
    "synchronized_calls",
    "uncatchable_exits",  # a subset of exit_calls
    "teardown_calls",  # a subset of exit_calls
    "raised_together",  # exception classes of collectives already seeded: only silences RC105
    "shape_factories",
    "shape_from_values",
    "shape_dimension_factories",
    "shape_sequences",
    "shape_sharders",
    "shape_node_split_keywords",  # a per-rank share of shards: what is looped over must reach a collective already
    "shape_node_splitters",
    "shape_decoders",
    "shape_padders",
    "shape_equal_splitters",
    "shape_pad_by",
    "shape_decoders_not_with",
    "shape_row_wise",
    "shape_row_inputs",
    "shape_counts",
    "shape_count_methods",
    "shape_reducers",
    "shape_losses",
    "shape_losses_unreduced",
    "shape_reshapers",
    "shape_keepers",
    "shape_like",
    "shape_like_functions",
    "shape_data_dependent",  # as long as the values pick: per rank only where they already are
    "shape_pieces",  # as many pieces as asked: what is cut is already selected
    "shape_selectors",  # as many items as indexed: the same
    "shape_copies",  # a copy is what it copies: the same
    "files_writers",  # files written on some ranks: per-rank data where a file naming collectives tests for them
    "files_opens",
    "files_writer_methods",
    "files_receiver_writers",
    "files_observers",
    "files_observer_methods",
    "files_other_paths",
    "shape_dtype_methods",  # dtypes as written: they refine what a branch already selected
    "shape_dtype_aliases",
    "shape_default_dtypes",
    "shape_dtype_converters",
    "shape_layout_keywords",
    "shape_size_arguments",
    "shape_measures",
    "shape_size_attributes",
    "iteration_wrappers",
    "iteration_counters",
    "iteration_zips",
    "iteration_unordered",
    "iteration_orderers",
    "iteration_key_values",
    "iteration_values",
    "iteration_displays",
    "collate_keywords",
    "seed_sharing_datasets",  # a DataLoader (a seeded type) is built over the pipe: which loops communicate
    "module_bases",
    "module_containers",
    "container_mutators",
    "container_adders",
    "uniform_calls",
    "uniform_attributes",
    "placement_methods",
    "placement_keywords",
    "self_methods",
    "library_methods",  # only keeps calls from being resolved by name
    "forwarding_calls",  # what they call is named in the file (and seeds it) where it matters
    "forwarding_methods",
    "uneven_ok_contexts",
    "group_membership",
    "group_ranks_calls",
    "distributed_tests",
    "distributed_flags",
    "world_size_names",
    "world_size_calls",
    "uniform_in_group",
    "group_names",
    "group_name_suffixes",  # only what a group-size call of a named group is: it refines, never seeds
    "group_rank_kinds",  # only names the kind of a rank read from a catalogued group
    "per_rank_exceptions",  # only refines a `try` of code selected for what it calls
    "exception_suppressors",  # only turns a `with` of code selected for what it calls into a `try`
    "group_source_ranks",
    "groups_within",  # only widens what a catalogued group's members agree on
    # Parameter names (of the rank, of per-rank data) and the calls that reveal a rank only judge
    # code selected for what it calls.
    "rank_names",
    "data_names",
    "data_name_suffixes",
    "optional_inputs",
    # A submodule call gathers only in a module class, which is selected for what it holds or
    # calls; the evidence names say only that the project shards, not where.
    "sharded_forward",
    "sharding_evidence",
    "staged_sharding_evidence",
    "sharding_stage_key",
    "sharding_stage",
    "parameter_free_modules",
    "sharding_tests",
    # Only whether a call of a catalogued type communicates under the program's backends.
    "backends",
    "predicate_names",
    "not_rank_words",
    "own_packages",  # narrows what the catalog names mean inside one package's own tree
    "rank_revealing",
)
# Not in the catalog but read by the analysis: generator context managers wrap a `with` body.
LANGUAGE_SEEDS = frozenset({"contextmanager"})

_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ATTRIBUTE_RE = re.compile(r"\.[ \t]*([A-Za-z_][A-Za-z0-9_]*)")
_IMPORT_LINE_RE = re.compile(r"[ \t]*(?:from[ \t]+([.\w]+)[ \t]+)?import[ \t]+(\([^)]*\)|[^\n#;]*)")
_DOTTED_RE = re.compile(r"^[A-Za-z_][\w.]*$")


# ------------------------------------------------------------------------------------------------
# the per-file scan


@dataclass(frozen=True)
class Scan:
    """What a cheap text scan of one file says (cached with the file's summary)."""

    words: FrozenSet[str]  # every identifier in the text, strings and comments included
    attributes: FrozenSet[str]  # identifiers right after a dot (`x.rank`)
    bindings: Tuple[Tuple[str, str], ...]  # (bound name or "*", dotted target) from imports
    relative: bool  # has a relative import: it names its own package implicitly


def scan_text(text: str) -> Scan:
    words = frozenset(_IDENT_RE.findall(text))
    attributes = frozenset(_ATTRIBUTE_RE.findall(text))
    bindings: List[Tuple[str, str]] = []
    relative = False
    position = 0
    # str.find and one anchored match per `import` keyword: ~20x faster than a multiline regex.
    while True:
        found = text.find("import", position)
        if found < 0:
            break
        line_start = text.rfind("\n", 0, found) + 1
        match = _IMPORT_LINE_RE.match(text, line_start)
        if match is None or match.end() <= found:
            position = found + 6
            continue
        position = match.end()
        source, names = match.group(1), match.group(2).strip().strip("()")
        if source is not None and source.startswith("."):
            relative = True
            continue  # relative targets are resolved by the parser; `relative` covers the mention
        for part in names.replace("\\", " ").split(","):
            tokens = part.split()
            if not tokens:
                continue
            name = tokens[0]
            alias = tokens[2] if len(tokens) >= 3 and tokens[1] == "as" else None
            if not _DOTTED_RE.match(name) and name != "*":
                continue
            if source is None:  # import a.b.c [as x]
                if alias is not None:
                    bindings.append((alias, name))
            else:
                target = f"{source}.{name}" if name != "*" else source
                bindings.append((alias or name, target))
    return Scan(words=words, attributes=attributes, bindings=tuple(bindings), relative=relative)


def scan_fingerprint() -> str:
    """Changes whenever what `scan_text` produces could (part of the cache namespace)."""
    import hashlib
    import inspect

    parts = [inspect.getsource(Scan), inspect.getsource(scan_text), _IDENT_RE.pattern, _ATTRIBUTE_RE.pattern, _IMPORT_LINE_RE.pattern, _DOTTED_RE.pattern]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


# ------------------------------------------------------------------------------------------------
# seeds from the catalog


@dataclass(frozen=True)
class Seed:
    name: str  # the word the file must contain
    qualifiers: FrozenSet[str]  # ... together with all of these (empty: the word alone is enough)
    dotted: str  # the catalog name it stands for
    attribute: bool = False  # the word counts only right after a dot


def _names_in(value: object) -> Iterator[str]:
    """Names a catalog field holds: the keys of a mapping (`collectives`, `types`, `rank_environ`)
    or the members of a set (`exit_calls`). Values are not names (an op, a rank kind, a spec), and
    neither are the members of a type (`methods.step`, `attributes.model`): those act only on an
    object whose type the file must first name, and as words they are everywhere (`to`, `step`)."""
    if isinstance(value, Mapping):
        for key in value:
            if isinstance(key, str):
                yield key
    elif isinstance(value, (set, frozenset, tuple, list)):
        for item in value:
            if isinstance(item, str):
                yield item


def seed_for(dotted: str, attribute: bool = False) -> Optional[Seed]:
    parts = [p for p in dotted.split(".") if p and p != "*"]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    if len(parts) == 1:
        return Seed(parts[0], frozenset(), dotted, attribute)
    # The middle components say which library (the first is often just `torch`, in every file);
    # any spelling of an import of it names them all: `import torch.distributed.checkpoint as
    # dcp`, `from torch.distributed.checkpoint import load`. Other spellings go through a project
    # alias, which `Selector` adds as a qualifier of its own.
    qualifiers = parts[1:-1] if len(parts) >= 3 else parts[:-1]
    return Seed(parts[-1], frozenset(qualifiers), dotted.rstrip(".*"), attribute)


def seeds_from_catalog(catalog: Catalog) -> Tuple[Seed, ...]:
    seen: Dict[Tuple[str, bool], Seed] = {}
    for field_name, kind in SEED_FIELDS.items():
        for name in _names_in(getattr(catalog, field_name, ())):
            seed = seed_for(name, attribute=(kind == "attribute"))
            if seed is not None:
                seen.setdefault((seed.dotted, seed.attribute), seed)
    for word in LANGUAGE_SEEDS:
        seen.setdefault((word, False), Seed(word, frozenset(), word))
    return tuple(seen[k] for k in sorted(seen))


def catalog_fields(catalog: Catalog) -> List[str]:
    return [f.name for f in dataclasses.fields(catalog)]


# ------------------------------------------------------------------------------------------------
# the selection


def _own_words(module: str, is_package: bool) -> FrozenSet[str]:
    return frozenset(plain_name(module).split("."))


class Selector:
    """Which files to parse: seeds first, then the relevant-name fixpoint (see module doc)."""

    def __init__(self, seeds: Sequence[Seed], scans: Sequence[Scan], modules: Sequence[Tuple[str, bool]]) -> None:
        self.scans = list(scans)
        self.modules = list(modules)
        self.plain_words: Set[str] = {s.name for s in seeds if not s.qualifiers and not s.attribute}
        self.plain_attributes: Set[str] = {s.name for s in seeds if not s.qualifiers and s.attribute}
        # word -> sets of words of which the file must contain all, besides the word itself
        self.requirements: Dict[str, Set[FrozenSet[str]]] = {}
        by_prefix: Dict[str, List[Seed]] = {}
        by_name: Dict[str, List[Seed]] = {}
        for seed in seeds:
            if not seed.qualifiers:
                continue
            self._require(seed.name, seed.qualifiers)
            parts = seed.dotted.split(".")
            by_name.setdefault(seed.dotted, []).append(seed)
            for cut in range(2, len(parts)):
                by_prefix.setdefault(".".join(parts[:cut]), []).append(seed)
        # A project file that binds a catalog module under another name makes that name a
        # qualifier (`from .comm import dist` elsewhere); one that re-exports a catalog name
        # makes its own module name one (`from .utils import all_reduce`, `from utils import *`).
        for scan, (module, _is_package) in zip(self.scans, self.modules):
            own = frozenset([last_word(module)])
            for alias, target in scan.bindings:
                for seed in by_prefix.get(target, ()):
                    self._require(seed.name, own if alias == "*" else frozenset([alias]))
                for seed in by_name.get(target, ()):
                    self._require(seed.name if alias == "*" else alias, own)
        self.tokens: Set[Tuple[str, Optional[str]]] = set()  # relevant project names found so far

    def _require(self, word: str, qualifiers: FrozenSet[str]) -> None:
        self.requirements.setdefault(word, set()).add(qualifiers)

    def words_of(self, index: int) -> FrozenSet[str]:
        scan = self.scans[index]
        if scan.relative:
            module, is_package = self.modules[index]
            return scan.words | _own_words(module, is_package)
        return scan.words

    def is_seed_candidate(self, index: int) -> bool:
        words = self.words_of(index)
        if not self.plain_words.isdisjoint(words) or not self.plain_attributes.isdisjoint(self.scans[index].attributes):
            return True
        for word in self.requirements.keys() & words:
            if any(required <= words for required in self.requirements[word]):
                return True
        return False

    def seed_hits(self, index: int) -> List[str]:
        """Why a file is a candidate (for diagnostics and the benchmark report)."""
        words = self.words_of(index)
        hits = sorted(self.plain_words & words) + sorted("." + a for a in self.plain_attributes & self.scans[index].attributes)
        hits += sorted(w for w in self.requirements.keys() & words if any(r <= words for r in self.requirements[w]))
        return hits

    def add_tokens(self, tokens: Iterable[Tuple[str, Optional[str]]]) -> Set[Tuple[str, Optional[str]]]:
        """Record relevant names (name, module word or None); return the ones not seen before."""
        new = set(tokens) - self.tokens
        self.tokens |= new
        return new

    def mentions(self, index: int, tokens: Set[Tuple[str, Optional[str]]]) -> bool:
        words = self.words_of(index)
        attributes = self.scans[index].attributes
        for name, qualifier in tokens:
            if qualifier == ATTRIBUTE:
                if name in attributes:
                    return True
            elif name in words and (qualifier is None or qualifier in words):
                return True
        return False


# ------------------------------------------------------------------------------------------------
# the fixpoint: names of project code that matters, from the parsed summaries



class _Knowledge:
    """The catalog, indexed for the checks of one function's own code."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.environ = set(getattr(catalog, "rank_environ", {}) or ())
        self.attributes = set(getattr(catalog, "rank_attributes", {}) or ()) | set(getattr(catalog, "predicate_attributes", {}) or ())
        # Rank predicates by method name (`trainer.is_world_process_zero()`); the methods of
        # framework types need a typed object, which needs the type's name (a seed) somewhere.
        self.methods: Set[str] = set(getattr(catalog, "predicate_methods", {}) or ())
        self.decorators = set(getattr(catalog, "rank_zero_only", ()) or ())
        self.names: Set[str] = set()
        for field_name, kind in SEED_FIELDS.items():
            if kind != "data":
                self.names.update(n.rstrip(".*") for n in _names_in(getattr(catalog, field_name, ())))

    def known_name(self, dotted: str) -> bool:
        if dotted in self.names:
            return True
        type_spec = getattr(self.catalog, "type_spec", None)
        return bool(type_spec and type_spec(dotted))


def _touches_locally(fn: FunctionSummary, know: _Knowledge) -> bool:
    """The function's own code reads a rank source or names catalog knowledge (no resolution)."""
    if any(d.rsplit(".", 1)[-1] in know.decorators for d in fn.decorators):
        return True
    for site in fn.calls:
        callee = site.callee
        if callee[0] in ("attr", "self", "super") and callee[-1] in know.methods:
            return True
    for expr in walk_tuples((fn.body, tuple(site.args for site in fn.calls), tuple(site.kwargs for site in fn.calls))):
        tag = expr[0]
        if tag == "environ" and len(expr) == 2 and expr[1] in know.environ:
            return True
        if tag == "attr" and len(expr) == 3 and expr[2] in know.attributes:
            return True
        if tag == "const" and len(expr) == 2 and isinstance(expr[1], str) and expr[1] in know.environ:
            return True
    return False


def relevant_functions(program: Program, local_cache: Optional[Dict[str, bool]] = None) -> Set[str]:
    """Functions that touch the catalog, directly or through project calls (an over-approximation
    of both 'reaches a collective' and 'computes something rank-dependent')."""
    know = _Knowledge(program.catalog)
    local_cache = {} if local_cache is None else local_cache
    methods_by_name: Dict[str, List[str]] = {}
    for qual, fn in program.functions.items():
        if fn.class_qualname is not None:
            methods_by_name.setdefault(fn.name, []).append(qual)
    callers: Dict[str, List[str]] = {}
    relevant: Set[str] = set(program.reach)
    for qual, fn in program.functions.items():
        touched = local_cache.get(qual)
        if touched is None:
            touched = local_cache[qual] = _touches_locally(fn, know)
        if touched:
            relevant.add(qual)
        for site in fn.calls:
            target = program.static_target(fn, site)
            callees: List[str] = []
            if target is not None:
                if target.kind in ("collective", "rank_call", "predicate_call", "exit"):
                    relevant.add(qual)
                elif target.kind in ("function", "class"):
                    called = program.function_run(target)
                    if called is not None:
                        callees.append(called.qualname)
                    if target.kind == "class" and any(
                        know.known_name(b) or know.known_name(program.resolve(b).qualname)
                        for cls in program.class_chain(target.qualname)
                        for b in cls.bases
                    ):
                        relevant.add(qual)  # constructs a framework type (a DDP subclass)
                elif know.known_name(target.qualname):
                    relevant.add(qual)
            if site.callee[0] == "attr":
                # obj.method(): any project method of that name (the object's type is not known here)
                callees.extend(methods_by_name.get(site.callee[2], ()))
            for callee in callees:
                callers.setdefault(callee, []).append(qual)
    queue = deque(relevant)
    while queue:
        callee = queue.popleft()
        for caller in callers.get(callee, ()):
            if caller not in relevant:
                relevant.add(caller)
                queue.append(caller)
    return relevant


# (name, qualifier): a file mentions it when it contains the name and the qualifier, a module's
# last name; the qualifier ATTRIBUTE instead means "the name right after a dot" (`obj.method`).
Token = Tuple[str, Optional[str]]
ATTRIBUTE = "."


def _module_word(module: str) -> str:
    return last_word(module)  # as an import spells it: `pretrain/utils` is imported as `utils`


def _site_matters(program: Program, fn: FunctionSummary, index: int, relevant: Set[str], know: _Knowledge) -> bool:
    if index >= len(fn.calls):
        return False
    target = program.static_target(fn, fn.calls[index])
    if target is None:
        return False
    if target.kind in ("collective", "rank_call", "predicate_call", "exit"):
        return True
    if target.kind == "function":
        return target.qualname in relevant
    return know.known_name(target.qualname)


def _relevant_globals(program: Program, fn: FunctionSummary, relevant: Set[str], know: _Knowledge) -> Set[str]:
    """Module-level names assigned from something rank- or collective-related (`RANK = ...`,
    `IS_MAIN = dist.get_rank() == 0`, `GROUP = dist.new_group(...)`), or from such a name."""
    found: Set[str] = set()

    def names_of(target: tuple) -> Iterator[str]:
        if target and target[0] == "name":
            yield target[1]
        elif target and target[0] == "unpack":
            for sub in target[1]:
                yield from names_of(sub)

    def value_matters(value: object) -> bool:
        for expr in walk_tuples(value):
            tag = expr[0]
            if tag == "call" and len(expr) == 2 and isinstance(expr[1], int) and _site_matters(program, fn, expr[1], relevant, know):
                return True
            if tag == "environ" and len(expr) == 2 and expr[1] in know.environ:
                return True
            if tag == "attr" and len(expr) == 3 and expr[2] in know.attributes:
                return True
            if tag == "name" and len(expr) == 2 and expr[1] in found:
                return True
        return False

    for _ in range(2):  # a second pass for names assigned from names found in the first
        for stmt in statements(fn.body):
            if stmt[0] in ("assign", "augassign") and value_matters(stmt[2]):
                for target in stmt[1] if stmt[0] == "assign" else (stmt[1],):
                    found.update(names_of(target))
    return found


def relevant_names(program: Program, relevant: Set[str]) -> Set[Token]:
    """What makes a not-yet-parsed file worth parsing, given what is parsed now.

    A function can be named from another file only through an import, which names its module
    (`from pkg.steps import step`, `import pkg.steps`, `from .steps import step`), or through a
    re-export, which names the re-exporting module (found here once that one is parsed): so a
    function's name counts together with its module's name. A method is called on objects whose
    type may come from a caller (a parameter), so its name after any dot counts (`obj.step()`)."""
    know = _Knowledge(program.catalog)
    tokens: Set[Token] = set()
    classes: Set[str] = set()
    for qual in relevant:
        fn = program.functions[qual]
        if fn.name == "<module>":
            for name in _relevant_globals(program, fn, relevant, know):
                tokens.add((name, _module_word(fn.module)))
            continue
        if fn.class_qualname is not None:
            classes.add(fn.class_qualname)
            if not (fn.name.startswith("__") and fn.name.endswith("__")):
                tokens.add((fn.name, ATTRIBUTE))  # dunders are reached through their class's name
        else:
            tokens.add((fn.name, _module_word(fn.module)))
    # Classes deriving from relevant classes or from framework types are relevant too.
    changed = True
    while changed:
        changed = False
        for qual, cls in program.classes.items():
            if qual in classes:
                continue
            for base in cls.bases:
                base_target = program.resolve(base)
                if base_target.qualname in classes or know.known_name(base_target.qualname) or know.known_name(base):
                    classes.add(qual)
                    changed = True
                    break
    for qual in classes:
        cls = program.classes[qual]
        tokens.add((cls.name, _module_word(cls.module)))
    # Aliases under which parsed modules bind any of it (re-exports): `from .ops import sync as s`.
    for module, summary in program.modules.items():
        for alias, target in summary.imports:
            resolved = program.resolve(target)
            if (
                resolved.kind in ("collective", "rank_call", "predicate_call", "exit")
                or (resolved.kind == "function" and resolved.qualname in relevant)
                or (resolved.kind == "class" and resolved.qualname in classes)
                or know.known_name(resolved.qualname)
            ):
                tokens.add((alias, _module_word(module)))
    return tokens


def modules_to_follow(program: Program, skipped: Set[str], words: Set[str], relevant: Set[str]) -> Set[str]:
    """Skipped modules that a parsed module's reference to a relevant name must pass through:
    `from pkg import is_main` with `is_main` re-exported by a skipped `pkg/__init__.py`, or
    `comm.dist.barrier()` with `dist` bound in a skipped `comm.py`. Link cannot see through a
    minimal summary, so these get parsed too.

    And skipped modules whose functions relevant code calls with arguments: what it passes may
    be what issues the collective (`evaluate(ddp_model, loader)` runs the DDP forward in a file
    that names nothing the catalog knows, `Checkpointer(engine)` later calls the engine)."""
    out: Set[str] = set()

    def follow(dotted: str, any_name: bool = False) -> None:
        parts = dotted.split(".")
        if not any_name and parts[-1] not in words:
            return
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module in program.modules:
                if module in skipped:
                    out.add(module)
                return

    for name, summary in program.modules.items():
        if name in skipped:
            continue
        for _alias, target in summary.imports:
            resolved = program.resolve(target)
            if resolved.kind == "external":
                follow(resolved.qualname)
        for fn in summary.functions:
            passes_values = fn.qualname in relevant
            for site in fn.calls:
                if site.callee[0] == "qual":
                    resolved = program.resolve(site.callee[1])
                    if resolved.kind == "external":
                        follow(resolved.qualname, any_name=passes_values and bool(site.args or site.kwargs))
    return out
