"""Summaries for many files: reading, caching, choosing what to parse, and parsing in parallel.

The per-module step is pure (`frontend.lower.summarize_source`), so this is where caching, fanning out
across processes and skipping files that cannot matter belong (the performance work lives here,
not in the analysis). One run:

1. identify each file's content: the stat fast path of the cache, else read + hash (unsaved
   buffers are hashed as given);
2. scan the text of files the cache does not know (identifiers and imports, `prefilter.scan_text`);
3. choose: files that name catalog knowledge are parsed; the others get a minimal summary (module
   name and suppressions) once `compile()` agrees they are valid Python (a file that does not
   compile is always parsed, so its RC001 is the parser's);
4. grow the choice to a fixpoint: link what is parsed, take the names of project code that turned
   out relevant, parse the skipped files that mention one, repeat (`selection.demand_driven`);
5. parse what is chosen and not cached, in a process pool when there is enough of it (`pool`).
The result is one summary per file, in the order given, identical whether it came from the cache,
a worker process or this one. `PipelineOptions.prefilter=False` (or `RANKCHECK_PREFILTER=0`) parses
every file.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Set, Tuple

from rankcheck.catalog import Catalog
from rankcheck.driver.cache import (
    Entry,
    SummaryCache,
    bytes_digest,
    namespace,
    now_ns,
    package_fingerprint,
    restamp,
    text_digest,
)
from rankcheck.driver.discover import SourceFile
from rankcheck.driver.pool import Runner, Task, gc_paused, summarize_task
from rankcheck.driver.progress import Progress
from rankcheck.driver.selection import demand_driven
from rankcheck.frontend.source import read_source
from rankcheck.program.ir import ModuleSummary, ParseProblem

if TYPE_CHECKING:
    from rankcheck.frontend.reparse import RecentParses

# When the catalog's names alone already select this share of the source, the relevant-name
# fixpoint would end near everything anyway (87-99% on Megatron-LM, fairseq, torchtitan and
# accelerate) while costing seconds of linking per run: parse everything instead.
DENSE_SEED_SHARE = 0.5


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
    recent_parses: Optional[RecentParses] = None


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


def summarize_file(source: SourceFile, text_override: Optional[str] = None) -> ModuleSummary:
    """Read, decode and summarize one file; a problem becomes part of the summary, never raises."""
    text, problem = (text_override, None) if text_override is not None else read_source(source.path)[1:]
    if text is None:
        return ModuleSummary(source.display, source.module, source.is_package, problem=problem)
    return summarize_task((0, "full", text, source.display, source.module, source.is_package, source.import_map))[2]


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
    entry = cache.load(digest, source.module, source.is_package, source.import_map) if cache is not None else None
    f.entry = entry if entry is not None else Entry(digest, source.module, source.is_package, source.import_map, dirty=True)


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
        source = f.source
        entry = cache.load(digest, source.module, source.is_package, source.import_map) if cache is not None else None
        f.entry = entry if entry is not None else Entry(digest, source.module, source.is_package, source.import_map, dirty=True)
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
    runner = Runner(options.jobs, options.parallel_min_bytes, progress, stats, options.recent_parses)
    paused = gc_paused()
    paused.__enter__()
    try:
        state = [_File(source, overrides.get(str(source.path))) for source in files]
        for f in state:
            _identify(f, cache)
        live = [i for i, f in enumerate(state) if f.final is None]
        run = FileStates(state, cache, runner, stats)
        if options.prefilter:
            summaries = demand_driven(run, live, catalog, options.dense_share)
        else:
            run.summarize([(i, "full") for i in live])
            runner.shutdown()
            summaries = run.assemble(set(live))
            stats.full_used = len(live)
        stats.cache_hits = sum(1 for f in state if f.entry is not None and not f.computed)
        if cache is not None:
            for f in state:
                if f.entry is not None and f.entry.dirty:
                    cache.store(f.entry)
    except BaseException:
        runner.abort()  # Ctrl-C or SIGTERM: stop the workers before anything else
        raise
    finally:
        if cache is not None:
            cache.close()  # the stat index too, so that the next run finds the stored summaries by stat
        runner.shutdown()
        progress.close()
        paused.__exit__()
    if _env_flag("RANKCHECK_STATS", False) or (stats.pool_error and _env_flag("RANKCHECK_DEBUG", False)):
        sys.stderr.write(stats.line() + "\n")
    return summaries


def results_key(files: Sequence[SourceFile], overrides: Dict[str, str], options: PipelineOptions, extra: str) -> Optional[str]:
    """A key for a whole run's results: every file's path, module, role, import map and content digest (from
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
        shared = f"\0{source.import_map}" if source.import_map else ""
        digest.update(f"{source.display}\0{source.module}\0{int(source.is_package)}\0{int(source.report)}\0{content}{shared}\n".encode())
    return digest.hexdigest()




class FileStates:
    """Every file's state during one run of `collect_summaries`: what the demand-driven choice
    (`selection.demand_driven`) reads and asks to be summarized."""

    def __init__(self, state: List[_File], cache: Optional[SummaryCache], runner: Runner, stats: PipelineStats) -> None:
        self.files = state
        self.cache = cache
        self.runner = runner
        self.stats = stats

    def summarize(self, work: Sequence[Tuple[int, str]]) -> None:
        """Make sure each listed file's entry holds the summary of the given kind ("full" or
        "light"), computing only what the cache does not have, in one batch (one pool serves both
        kinds)."""
        state, cache, stats = self.files, self.cache, self.stats
        tasks: List[Task] = []
        for i, kind in work:
            f = state[i]
            if f.entry is not None and _has(f.entry, kind):
                continue
            if not _ensure_text(f, cache) or f.entry is None or _has(f.entry, kind):
                continue
            source = f.source
            tasks.append((i, kind, f.text, source.display, source.module, source.is_package, source.import_map))  # type: ignore[arg-type]
        asked = {task[0]: task[1] for task in tasks}
        for index, got, payload in self.runner.run(tasks):
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
            if cache is not None:
                cache.store(entry)  # now, not at the end: an interrupted run keeps what it computed

    def ensure_text(self, index: int) -> bool:
        return _ensure_text(self.files[index], self.cache)

    def uses_full(self, index: int, wanted: bool) -> bool:
        """A file is analysed from its full summary when chosen, or when it does not compile."""
        entry = self.files[index].entry
        if entry is None:
            return False
        if wanted:
            return True
        return entry.light is None or entry.light.problem is not None

    def assemble(self, wanted: Set[int]) -> List[ModuleSummary]:
        out: List[ModuleSummary] = []
        for i, f in enumerate(self.files):
            if f.final is not None or f.entry is None:
                out.append(f.final if f.final is not None else ModuleSummary(f.source.display, f.source.module, f.source.is_package, problem=ParseProblem("cannot read file", 1, 1)))
                continue
            entry = f.entry
            summary = entry.full() if self.uses_full(i, i in wanted) else entry.light
            if summary is None:  # a damaged cached blob: summarize it now, here
                _ensure_text(f, None)
                source = f.source
                summary = summarize_task((i, "full", f.text or "", source.display, source.module, source.is_package, source.import_map))[2]
                entry.set_full(summary)
            out.append(restamp(summary, f.source.display))
        return out

    def size(self, index: int) -> int:
        """Bytes of source (from the text when read, else from the stat of the fast path)."""
        f = self.files[index]
        if f.text is not None:
            return len(f.text)
        return f.stat.st_size if f.stat is not None else 0


def _has(entry: Entry, kind: str) -> bool:
    return entry.has_full if kind == "full" else entry.light is not None
