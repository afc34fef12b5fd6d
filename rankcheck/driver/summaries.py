"""Summaries for many files: reading, caching, choosing what to parse, and parsing in parallel.

The per-module step is pure (`summarize.summarize_source`), so this is where caching, fanning out
across processes and skipping files that cannot matter belong (the performance work lives here,
not in the analysis). One run:

1. identify each file's content: the stat fast path of the cache, else read + hash (unsaved
   buffers are hashed as given);
2. scan the text of files the cache does not know (identifiers and imports, `prefilter.scan_text`);
3. choose: files that name catalog knowledge are parsed; the others get a minimal summary (module
   name and suppressions) once `compile()` agrees they are valid Python (a file that does not
   compile is always parsed, so its RC001 is the parser's);
4. grow the choice to a fixpoint: link what is parsed, take the names of project code that turned
   out relevant, parse the skipped files that mention one, repeat;
5. parse what is chosen and not cached, in a process pool when there is enough of it.
The result is one summary per file, in the order given, identical whether it came from the cache,
a worker process or this one. `PipelineOptions.prefilter=False` (or `RANKCHECK_PREFILTER=0`) parses
every file.
"""

from __future__ import annotations

import gc
import hashlib
import multiprocessing
import os
import pickle
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from rankcheck.driver.cache import (
    PICKLE_PROTOCOL,
    Entry,
    SummaryCache,
    bytes_digest,
    namespace,
    now_ns,
    package_fingerprint,
    restamp,
    text_digest,
)
from rankcheck.catalog import Catalog
from rankcheck.driver.discover import SourceFile
from rankcheck.program.ir import ModuleSummary, ParseProblem
from rankcheck.frontend.guard import MAX_SOURCE_CHARS
from rankcheck.frontend.source import read_source
from rankcheck.driver.progress import Progress

if TYPE_CHECKING:
    from rankcheck.frontend.reparse import RecentParses

# Below this much source to parse (bytes; a minimal summary counts LIGHT_WEIGHT of its size) a
# process pool costs more than it saves. Measured here (bench/threshold.py, 2 cores): starting,
# feeding and stopping a fork pool costs ~10 ms once libcst is imported (it is, before the fork),
# a forkserver or spawn pool 0.6-0.8 s (each worker imports libcst); libcst summarizes ~130-160 KB
# of source per second per core. On a loaded machine the pool only broke even from ~130 KB, on an
# idle one the break-even is far lower: 64 KB (~0.4 s of work) for fork, 256 KB for the others.
PARALLEL_MIN_BYTES = 64 * 1024
PARALLEL_MIN_BYTES_SPAWN = 256 * 1024
LIGHT_WEIGHT = 0.05  # compile() + a suppression scan cost ~1/20 of a libcst summary
CHUNKS_PER_WORKER = 4
# When the catalog's names alone already select this share of the source, the relevant-name
# fixpoint would end near everything anyway (87-99% on Megatron-LM, fairseq, torchtitan and
# accelerate) while costing seconds of linking per run: parse everything instead.
DENSE_SEED_SHARE = 0.5
# The cyclic GC rescans the millions of small tuples that summaries are made of: with it on,
# unpickling Megatron-LM's summaries takes 4.7x longer and summarizing 15-20% longer. It is off
# while summaries are built, with a young-generation collection every GC_EVERY files.
GC_EVERY = 16


def _env_flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() not in ("0", "false", "no", "off")  # "force" counts as on


@dataclass(frozen=True)
class PipelineOptions:
    cache_dir: Optional[Path] = None  # None: no cache
    jobs: Optional[int] = None  # None: sized to the machine
    # Demand-driven parsing (see prefilter.py); RANKCHECK_PREFILTER=0 turns it off to compare.
    prefilter: bool = field(default_factory=lambda: _env_flag("RANKCHECK_PREFILTER", True))
    # Parse everything when the catalog's names select this share of the source or more;
    # RANKCHECK_PREFILTER=force runs the fixpoint whatever the share (tests, measurements).
    dense_share: float = field(default_factory=lambda: float("inf") if os.environ.get("RANKCHECK_PREFILTER") == "force" else DENSE_SEED_SHARE)
    # None: PARALLEL_MIN_BYTES; 0 forces the pool whenever there is work (tests), a huge value
    # keeps everything in this process.
    parallel_min_bytes: Optional[int] = None
    # The last parse trees of edited buffers (the language server's workspace): a file summarized
    # here, not in a worker, is parsed again only where it changed (reparse.py).
    recent_parses: Optional["RecentParses"] = None


@dataclass
class PipelineStats:
    """What one run did (for tests, `RANKCHECK_STATS=1` and the benchmark)."""

    files: int = 0
    cache_hits: int = 0  # files whose needed summary came from the cache
    parsed: int = 0  # full summaries computed in this run
    light_computed: int = 0  # minimal summaries computed in this run
    full_used: int = 0  # files analysed from a full summary
    minimal_used: int = 0  # files skipped by the prefilter (minimal summary)
    rounds: int = 0  # fixpoint rounds that parsed more files
    workers: int = 0  # processes used (0: all in this process)
    pooled: int = 0  # summaries computed by worker processes
    pool_error: str = ""  # why the pool was given up for this process (then: serial)
    dense: bool = False  # the catalog's names selected so much that everything was parsed

    def line(self) -> str:
        return (
            f"rankcheck: {self.files} files, {self.full_used} parsed for analysis, {self.minimal_used} skipped by the "
            f"prefilter; computed {self.parsed} summaries and {self.light_computed} minimal ones "
            f"({self.cache_hits} from the cache), {self.rounds} extra rounds, {self.workers} worker processes"
            + (f" ({self.pooled} by them)" if self.workers else "")
            + (" (dense: all parsed)" if self.dense else "")
            + (f"; pool failed, serial instead: {self.pool_error}" if self.pool_error else "")
        )


# ------------------------------------------------------------------------------------------------
# the per-file work (runs in this process or in a worker)

Task = Tuple[int, str, str, str, str, bool]  # index, kind ("full"|"light"), text, display, module, is_package
Outcome = Tuple[int, str, ModuleSummary]  # index, kind actually computed, summary


def _compiles(text: str, display: str) -> bool:
    """Whether a file the prefilter skips compiles (else it is parsed for its RC001). A huge one
    counts as compiling: compile() peaks at ~110x the text (5.8 GB for a 50 MB data table), and
    nothing in the file matters to the analysis."""
    from rankcheck.frontend.guard import python_compiles

    return len(text) > MAX_SOURCE_CHARS or python_compiles(text, display)


def _work(task: Task, parses: Optional["RecentParses"] = None) -> Outcome:
    index, kind, text, display, module, is_package = task
    if kind == "light":
        from rankcheck.frontend.suppressions import parse_suppressions

        if _compiles(text, display):
            return index, "light", ModuleSummary(display, module, is_package, suppressions=parse_suppressions(text))
        # Does not compile: the parser's own verdict (RC001 and its position) is what counts.
    from rankcheck.frontend.lower import summarize_source

    return index, "full", summarize_source(text, display, module, is_package, parses)


def _work_chunk(chunk: List[Task]) -> List[Tuple[int, str, object]]:
    """A worker's share. Full summaries go back pickled: the parent keeps them as bytes (and writes
    them to the cache as they are) until the analysis needs them, after the workers are gone, so
    the parent's summaries and the workers' parse trees are never in memory at the same time."""
    with gc_paused():
        out: List[Tuple[int, str, object]] = []
        for n, task in enumerate(chunk, 1):
            index, kind, summary = _work(task)
            if kind == "full":
                out.append((index, kind, pickle.dumps(summary, protocol=PICKLE_PROTOCOL)))
            else:
                out.append((index, kind, summary))
            if n % GC_EVERY == 0:
                gc.collect(1)
        return out


class gc_paused:
    """Automatic cyclic GC off for a while (libcst leaves some cycles: collected in batches)."""

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.was_enabled:
            gc.enable()


def summarize_file(source: SourceFile, text_override: Optional[str] = None) -> ModuleSummary:
    """Read, decode and summarize one file; a problem becomes part of the summary, never raises."""
    text, problem = (text_override, None) if text_override is not None else read_source(source.path)[1:]
    if text is None:
        return ModuleSummary(source.display, source.module, source.is_package, problem=problem)
    return _work((0, "full", text, source.display, source.module, source.is_package))[2]


# ------------------------------------------------------------------------------------------------
# the process pool


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))  # honours taskset/cgroup CPU limits
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _start_method() -> str:
    methods = multiprocessing.get_all_start_methods()
    # fork is the cheapest (no re-import) but unsafe once threads run (the language server's);
    # it is also what macOS and Windows lack or discourage.
    if sys.platform.startswith("linux") and "fork" in methods and threading.active_count() == 1:
        return "fork"
    if "forkserver" in methods:
        return "forkserver"
    return "spawn"


class _Runner:
    """Runs tasks here or in a pool that is started once per run, only when it pays off."""

    def __init__(self, jobs: Optional[int], min_bytes: Optional[int], progress: Progress, stats: PipelineStats,
                 parses: Optional["RecentParses"] = None) -> None:
        self.jobs = jobs if jobs is not None and jobs > 0 else default_jobs()
        self.parses = parses
        self.min_bytes = min_bytes
        self.progress = progress
        self.stats = stats
        self.pool = None
        self.pool_failed = False
        self.method = _start_method()

    def _threshold(self) -> float:
        if self.min_bytes is not None:
            return self.min_bytes
        return PARALLEL_MIN_BYTES if self.method == "fork" else PARALLEL_MIN_BYTES_SPAWN

    def run(self, tasks: List[Task]) -> List[Tuple[int, str, object]]:
        if not tasks:
            return []
        self.progress.add_total(len(tasks))
        weight = sum(len(t[2]) * (LIGHT_WEIGHT if t[1] == "light" else 1.0) for t in tasks)
        if self.jobs > 1 and len(tasks) > 1 and weight >= self._threshold() and self._ensure_pool():
            try:
                out = self._run_pool(tasks)
                self.stats.pooled += len(out)
                return out
            except Exception as exc:  # noqa: BLE001 - a broken pool (killed worker, no semaphores): go serial
                self.pool_failed = True
                self.stats.pool_error = f"{type(exc).__name__}: {exc}"
                self.shutdown()
        out = []
        for n, task in enumerate(tasks, 1):
            out.append(_work(task, self.parses))
            self.progress.advance()
            if n % GC_EVERY == 0:
                gc.collect(1)
        return out

    def _ensure_pool(self) -> bool:
        if self.pool is not None:
            return True
        if self.pool_failed or multiprocessing.current_process().daemon:
            return False  # daemonic processes may not have children
        try:
            from concurrent.futures import ProcessPoolExecutor

            import rankcheck.frontend.lower  # noqa: F401 - imported once here, inherited by forked workers

            context = multiprocessing.get_context(self.method)
            self.pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=context)
        except Exception as exc:  # noqa: BLE001 - no /dev/shm, no fork, sandboxed: serial it is
            self.pool_failed = True
            self.stats.pool_error = f"{type(exc).__name__}: {exc}"
            self.pool = None
            return False
        self.stats.workers = self.jobs
        return True

    def _run_pool(self, tasks: List[Task]) -> List[Tuple[int, str, object]]:
        from concurrent.futures import as_completed

        # Largest first into the lightest chunk: chunks of similar cost, a few per worker so that a
        # slow chunk does not leave the other workers idle at the end.
        count = min(len(tasks), self.jobs * CHUNKS_PER_WORKER)
        chunks: List[List[Task]] = [[] for _ in range(count)]
        loads = [0.0] * count
        for task in sorted(tasks, key=lambda t: -len(t[2])):
            lightest = loads.index(min(loads))
            chunks[lightest].append(task)
            loads[lightest] += len(task[2]) * (LIGHT_WEIGHT if task[1] == "light" else 1.0) + 200
        futures = [self.pool.submit(_work_chunk, chunk) for chunk in chunks if chunk]
        sizes = {future: len(chunk) for future, chunk in zip(futures, [c for c in chunks if c])}
        out: List[Tuple[int, str, object]] = []
        for future in as_completed(futures):
            out.extend(future.result())
            self.progress.advance(sizes[future])
        return out

    def shutdown(self) -> None:
        if self.pool is not None:
            try:
                self.pool.shutdown(wait=True)
            except Exception:  # noqa: BLE001, S110 - shutting down a pool that already failed
                pass
            self.pool = None


# ------------------------------------------------------------------------------------------------
# the run


class _File:
    """One file's state during a run."""

    __slots__ = ("source", "override", "text", "entry", "final", "stat", "read_started", "computed")

    def __init__(self, source: SourceFile, override: Optional[str]) -> None:
        self.source = source
        self.override = override
        self.text: Optional[str] = override
        self.entry: Optional[Entry] = None
        self.final: Optional[ModuleSummary] = None  # set for files that cannot be read or decoded
        self.stat: Optional[os.stat_result] = None
        self.read_started = 0
        self.computed = False  # a summary of it was computed in this run


def _identify(f: _File, cache: Optional[SummaryCache]) -> None:
    """Find the file's content digest (and its cache entry) reading as little as possible."""
    source = f.source
    digest: Optional[str] = None
    if f.override is not None:
        digest = text_digest(f.override)
    else:
        if cache is not None:
            try:
                f.stat = os.stat(source.path)
            except OSError:
                f.stat = None
            if f.stat is not None:
                digest = cache.digest_from_stat(str(source.path), f.stat)
        if digest is None:
            digest = _load_text(f, cache)
            if digest is None:
                return
    entry = cache.load(digest, source.module, source.is_package) if cache is not None else None
    f.entry = entry if entry is not None else Entry(digest, source.module, source.is_package, dirty=True)


def _load_text(f: _File, cache: Optional[SummaryCache]) -> Optional[str]:
    """Read and decode the file; returns its digest, or None after recording why it cannot be."""
    source = f.source
    f.read_started = now_ns()
    data, text, problem = read_source(source.path)
    if text is None:
        f.final = ModuleSummary(source.display, source.module, source.is_package, problem=problem)
        return None
    f.text = text
    digest = bytes_digest(data)  # type: ignore[arg-type]
    if cache is not None and f.stat is not None:
        cache.note_stat(str(source.path), f.stat, digest, f.read_started)
    return digest


def _ensure_text(f: _File, cache: Optional[SummaryCache]) -> bool:
    """The text of a file identified through the stat path, when its entry lacks what we need."""
    if f.text is not None:
        return True
    old = f.entry
    digest = _load_text(f, cache)
    if digest is None:
        f.entry = None
        return False
    if old is None or old.digest != digest:  # changed since the stat: start from its real content
        entry = cache.load(digest, f.source.module, f.source.is_package) if cache is not None else None
        f.entry = entry if entry is not None else Entry(digest, f.source.module, f.source.is_package, dirty=True)
    return True


def collect_summaries(
    files: Sequence[SourceFile],
    overrides: Dict[str, str],
    catalog: Catalog,
    options: PipelineOptions = PipelineOptions(),
    stats: Optional[PipelineStats] = None,
) -> List[ModuleSummary]:
    """One summary per file, in the order given. `overrides` maps absolute paths to unsaved text."""
    stats = stats if stats is not None else PipelineStats()
    stats.files = len(files)
    progress = Progress()
    cache = SummaryCache(options.cache_dir) if options.cache_dir is not None else None
    runner = _Runner(options.jobs, options.parallel_min_bytes, progress, stats, options.recent_parses)
    paused = gc_paused()
    paused.__enter__()
    try:
        state = [_File(source, overrides.get(str(source.path))) for source in files]
        for f in state:
            _identify(f, cache)
        live = [i for i, f in enumerate(state) if f.final is None]
        if options.prefilter:
            summaries = _demand_driven(state, live, catalog, cache, runner, stats, options.dense_share)
        else:
            _summarize(state, [(i, "full") for i in live], cache, runner, stats)
            runner.shutdown()
            summaries = _assemble(state, set(live))
            stats.full_used = len(live)
        stats.cache_hits = sum(1 for f in state if f.entry is not None and not f.computed)
        if cache is not None:
            for f in state:
                if f.entry is not None and f.entry.dirty:
                    cache.store(f.entry)
            cache.close()
    finally:
        runner.shutdown()
        progress.close()
        paused.__exit__()
    if _env_flag("RANKCHECK_STATS", False) or (stats.pool_error and _env_flag("RANKCHECK_DEBUG", False)):
        sys.stderr.write(stats.line() + "\n")
    return summaries


def results_key(files: Sequence[SourceFile], overrides: Dict[str, str], options: PipelineOptions, extra: str) -> Optional[str]:
    """A key for a whole run's results: every file's path, module, role and content digest (from
    the stat fast path: nothing is read), the package source, the cache namespace, the prefilter
    mode and `extra` (the caller's configuration). None when there is no cache or a file's content
    is not known without reading it (new, changed, or modified too recently to trust its stat):
    then the run has work to do anyway, and after it the key is known."""
    if options.cache_dir is None:
        return None
    cache = SummaryCache(options.cache_dir)
    digest = hashlib.sha256()
    digest.update(f"{namespace()}\0{package_fingerprint()}\0{options.prefilter}\0{options.dense_share}\0{extra}\n".encode())
    for source in files:
        override = overrides.get(str(source.path))
        if override is not None:
            content: Optional[str] = text_digest(override)
        else:
            try:
                content = cache.digest_from_stat(str(source.path), os.stat(source.path))
            except OSError:
                return None
        if content is None:
            return None
        digest.update(f"{source.display}\0{source.module}\0{int(source.is_package)}\0{int(source.report)}\0{content}\n".encode())
    return digest.hexdigest()


def _summarize(state: List[_File], work: Sequence[Tuple[int, str]], cache: Optional[SummaryCache], runner: _Runner, stats: PipelineStats) -> None:
    """Make sure each listed file's entry holds the summary of the given kind ("full" or "light"),
    computing only what the cache does not have, in one batch (one pool serves both kinds)."""
    tasks: List[Task] = []
    for i, kind in work:
        f = state[i]
        if f.entry is not None and _has(f.entry, kind):
            continue
        if not _ensure_text(f, cache) or f.entry is None or _has(f.entry, kind):
            continue
        source = f.source
        tasks.append((i, kind, f.text, source.display, source.module, source.is_package))  # type: ignore[arg-type]
    asked = {task[0]: task[1] for task in tasks}
    for index, got, payload in runner.run(tasks):
        entry = state[index].entry
        assert entry is not None
        state[index].computed = True
        if got == "full":
            if isinstance(payload, bytes):
                entry.set_full_blob(payload)
            else:
                entry.set_full(payload)  # type: ignore[arg-type]
            stats.parsed += 1
            if asked[index] == "light":
                # It does not compile: remember that, so that the next run does not try again.
                summary = entry.full()
                problem = (summary.problem if summary is not None else None) or ParseProblem("does not compile", 1, 1)
                entry.light = ModuleSummary(state[index].source.display, entry.module, entry.is_package, problem=problem)
        else:
            entry.light = payload  # type: ignore[assignment]
            entry.dirty = True
            stats.light_computed += 1


def _has(entry: Entry, kind: str) -> bool:
    return entry.has_full if kind == "full" else entry.light is not None


def _uses_full(f: _File, wanted: bool) -> bool:
    """A file is analysed from its full summary when chosen, or when it does not compile."""
    entry = f.entry
    if entry is None:
        return False
    if wanted:
        return True
    return entry.light is None or entry.light.problem is not None


def _assemble(state: List[_File], wanted: set) -> List[ModuleSummary]:
    out: List[ModuleSummary] = []
    for i, f in enumerate(state):
        if f.final is not None or f.entry is None:
            out.append(f.final if f.final is not None else ModuleSummary(f.source.display, f.source.module, f.source.is_package, problem=ParseProblem("cannot read file", 1, 1)))
            continue
        entry = f.entry
        summary = entry.full() if _uses_full(f, i in wanted) else entry.light
        if summary is None:  # a damaged cached blob: summarize it now, here
            _ensure_text(f, None)
            summary = _work((i, "full", f.text or "", f.source.display, f.source.module, f.source.is_package))[2]
            entry.set_full(summary)
        out.append(restamp(summary, f.source.display))
    return out


def _size(f: _File) -> int:
    """Bytes of source (from the text when read, else from the stat of the fast path)."""
    if f.text is not None:
        return len(f.text)
    return f.stat.st_size if f.stat is not None else 0


def _demand_driven(
    state: List[_File],
    live: List[int],
    catalog: Catalog,
    cache: Optional[SummaryCache],
    runner: _Runner,
    stats: PipelineStats,
    dense_share: float,
) -> List[ModuleSummary]:
    from rankcheck.driver import prefilter
    from rankcheck.program.link import Program

    for i in live:
        f = state[i]
        if f.entry is not None and f.entry.scan is None and _ensure_text(f, cache) and f.entry is not None:
            f.entry.scan = prefilter.scan_text(f.text)  # type: ignore[arg-type]
            f.entry.dirty = True
    live = [i for i in live if state[i].entry is not None]
    scans = [state[i].entry.scan for i in live]  # type: ignore[union-attr]
    modules = [(state[i].source.module, state[i].source.is_package) for i in live]
    seeds = prefilter.seeds_from_catalog(catalog)
    selector = prefilter.Selector(seeds, scans, modules)
    wanted = {live[k] for k in range(len(live)) if selector.is_seed_candidate(k)}
    sizes = [_size(state[i]) for i in live]
    if sum(sizes[k] for k in range(len(live)) if live[k] in wanted) >= dense_share * max(sum(sizes), 1):
        stats.dense = True
        wanted = set(live)
    skipped = [k for k in range(len(live)) if live[k] not in wanted]

    # Minimal summaries for the rest (and full ones for those that do not compile), then the
    # candidates, in one batch so one pool serves both.
    _summarize(state, [(i, "full") for i in sorted(wanted)] + [(live[k], "light") for k in skipped], cache, runner, stats)
    local_cache: Dict[str, bool] = {}
    seed_words = {seed.name for seed in seeds} | set(selector.requirements)
    module_index = {state[live[k]].source.module: k for k in reversed(range(len(live)))}
    while skipped:
        program = Program(_assemble(state, wanted), catalog)
        new_tokens = selector.add_tokens(prefilter.relevant_names(program, local_cache))
        more = {k for k in skipped if new_tokens and selector.mentions(k, new_tokens)}
        # Module names as link registers them: of two files with one name, the first one.
        skipped_set = set(skipped)
        skipped_modules = {m for m, k in module_index.items() if k in skipped_set}
        for module in prefilter.modules_to_follow(program, skipped_modules, seed_words | {name for name, _ in selector.tokens}):
            more.add(module_index[module])
        more &= skipped_set
        if not more:
            break
        stats.rounds += 1
        chosen = {live[k] for k in more}
        wanted |= chosen
        skipped = [k for k in skipped if live[k] not in chosen]
        _summarize(state, [(i, "full") for i in sorted(chosen)], cache, runner, stats)
    runner.shutdown()  # before the summaries become objects: workers and those never coexist
    summaries = _assemble(state, wanted)
    stats.full_used = sum(1 for i in live if _uses_full(state[i], i in wanted))
    stats.minimal_used = len(live) - stats.full_used
    return summaries
