"""The per-file work and the process pool that runs it: a summary (or a minimal one) per task, in
this process or in worker processes started once per run when there is enough to do."""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import sys
import threading
from typing import TYPE_CHECKING, Iterator, List, Optional, Set, Tuple

from rankcheck.driver.cache import PICKLE_PROTOCOL
from rankcheck.driver.progress import Progress
from rankcheck.frontend.guard import MAX_SOURCE_CHARS
from rankcheck.program.ir import ModuleSummary

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from rankcheck.driver.summaries import PipelineStats
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
QUEUED_PER_WORKER = 4  # tasks handed to the pool ahead of each worker
# The cyclic GC rescans the millions of small tuples that summaries are made of: with it on,
# unpickling Megatron-LM's summaries takes 4.7x longer and summarizing 15-20% longer. It is off
# while summaries are built, with a young-generation collection every GC_EVERY files.
GC_EVERY = 16


# the per-file work (runs in this process or in a worker)

# index, kind ("full"|"light"), text, display, module, is_package, import map (SourceFile.import_map)
Task = Tuple[int, str, str, str, str, bool, Tuple[Tuple[str, str], ...]]
Outcome = Tuple[int, str, ModuleSummary]  # index, kind actually computed, summary


def _compiles(text: str, display: str) -> Optional[Tuple[Tuple[str, int], ...]]:
    """Whether a file the prefilter skips compiles (else it is parsed for its RC001): its absolute
    imports when it does (`ModuleSummary.absolute_imports`), else None. A huge one counts as
    compiling: compile() peaks at ~110x the text (5.8 GB for a 50 MB data table), and nothing in
    the file matters to the analysis (a full summary of it is an RC001 that reads no import)."""
    from rankcheck.frontend.guard import python_ast
    from rankcheck.frontend.scopes import absolute_imports_in

    if len(text) > MAX_SOURCE_CHARS:
        return ()
    tree = python_ast(text, display)
    return absolute_imports_in(tree) if tree is not None else None


def summarize_task(task: Task, parses: Optional[RecentParses] = None) -> Outcome:
    index, kind, text, display, module, is_package, import_map = task
    if kind == "light":
        from rankcheck.frontend.suppressions import parse_suppressions

        imports = _compiles(text, display)
        if imports is not None:
            return index, "light", ModuleSummary(display, module, is_package, suppressions=parse_suppressions(text), absolute_imports=imports)
        # Does not compile: the parser's own verdict (RC001 and its position) is what counts.
    from rankcheck.frontend.lower import summarize_source

    return index, "full", summarize_source(text, display, module, is_package, parses, import_map)


_worker_done = 0  # files this worker process has summarized (for its young-generation collections)


def init_worker() -> None:
    """A worker leaves Ctrl-C to the parent, which ends the pool at once (`Runner.abort`): a
    worker that caught it too would only report it back as a task's error. SIGTERM ends it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    gc.disable()


def work_one(task: Task) -> Tuple[int, str, object]:
    """A worker's summary of one file. A full summary goes back pickled: the parent keeps it as
    bytes (and writes it to the cache as it is) until the analysis needs it, after the workers are
    gone, so the parent's summaries and the workers' parse trees are never in memory at the same
    time."""
    global _worker_done
    index, kind, summary = summarize_task(task)
    _worker_done += 1
    if _worker_done % GC_EVERY == 0:
        gc.collect(1)
    if kind == "full":
        return index, kind, pickle.dumps(summary, protocol=PICKLE_PROTOCOL)
    return index, kind, summary


class gc_paused:
    """Automatic cyclic GC off for a while (libcst leaves some cycles: collected in batches)."""

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.was_enabled:
            gc.enable()


# ------------------------------------------------------------------------------------------------
# the process pool


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))  # honours taskset/cgroup CPU limits
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def start_method() -> str:
    methods = multiprocessing.get_all_start_methods()
    # fork is the cheapest (no re-import) but unsafe once threads run (the language server's);
    # it is also what macOS and Windows lack or discourage.
    if sys.platform.startswith("linux") and "fork" in methods and threading.active_count() == 1:
        return "fork"
    if "forkserver" in methods:
        return "forkserver"
    return "spawn"


class Runner:
    """Runs tasks here or in a pool that is started once per run, only when it pays off."""

    def __init__(self, jobs: Optional[int], min_bytes: Optional[int], progress: Progress, stats: PipelineStats,
                 parses: Optional[RecentParses] = None) -> None:
        self.jobs = jobs if jobs is not None and jobs > 0 else default_jobs()
        self.parses = parses
        self.min_bytes = min_bytes
        self.progress = progress
        self.stats = stats
        self.pool: Optional[ProcessPoolExecutor] = None
        self.pool_failed = False
        self.method = start_method()

    def _threshold(self) -> float:
        if self.min_bytes is not None:
            return self.min_bytes
        return PARALLEL_MIN_BYTES if self.method == "fork" else PARALLEL_MIN_BYTES_SPAWN

    def run(self, tasks: List[Task]) -> Iterator[Tuple[int, str, object]]:
        """Each task's outcome as soon as it is computed (in no particular order with a pool), so
        that the caller keeps it (in the cache) before the next: an interrupted run loses only
        the files still being summarized."""
        if not tasks:
            return
        self.progress.add_total(len(tasks))
        weight = sum(len(t[2]) * (LIGHT_WEIGHT if t[1] == "light" else 1.0) for t in tasks)
        done: Set[int] = set()
        if self.jobs > 1 and len(tasks) > 1 and weight >= self._threshold() and self._ensure_pool():
            try:
                for outcome in self._run_pool(tasks):
                    done.add(outcome[0])
                    self.stats.pooled += 1
                    yield outcome
                return
            except Exception as exc:
                self.pool_failed = True
                self.stats.pool_error = f"{type(exc).__name__}: {exc}"
                self.abort()
        for n, task in enumerate((t for t in tasks if t[0] not in done), 1):
            yield summarize_task(task, self.parses)
            self.progress.advance()
            if n % GC_EVERY == 0:
                gc.collect(1)

    def _ensure_pool(self) -> bool:
        if self.pool is not None:
            return True
        if self.pool_failed or multiprocessing.current_process().daemon:
            return False  # daemonic processes may not have children
        try:
            from concurrent.futures import ProcessPoolExecutor

            import rankcheck.frontend.lower  # noqa: F401 - imported once here, inherited by forked workers

            context = multiprocessing.get_context(self.method)
            self.pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=context, initializer=init_worker)
        except Exception as exc:
            self.pool_failed = True
            self.stats.pool_error = f"{type(exc).__name__}: {exc}"
            self.pool = None
            return False
        self.stats.workers = self.jobs
        return True

    def _run_pool(self, tasks: List[Task]) -> Iterator[Tuple[int, str, object]]:
        from concurrent.futures import FIRST_COMPLETED, wait

        pool = self.pool
        assert pool is not None  # _ensure_pool() started it
        # One file a task, the largest first: the workers take the next as they finish one, so
        # they end together, and the bar moves per file. Only a few tasks are queued ahead of the
        # workers at a time, so an interrupted run has little to cancel.
        pending = sorted(tasks, key=lambda t: -len(t[2]))
        pending.reverse()  # pop() from the end: the largest first
        running: Set[Future] = set()
        ahead = self.jobs * QUEUED_PER_WORKER
        try:
            while pending or running:
                while pending and len(running) < ahead:
                    running.add(pool.submit(work_one, pending.pop()))
                finished, running = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    yield future.result()
                    self.progress.advance()  # once the caller has kept it: the bar never counts a file the cache lacks
        except BaseException:
            self.abort()  # Ctrl-C, SIGTERM or a failed worker: no waiting for what still runs
            raise

    def abort(self) -> None:
        """End the pool now: queued tasks cancelled, running workers killed."""
        pool, self.pool = self.pool, None
        if pool is None:
            return
        # ProcessPoolExecutor has no public way to stop a running task; its worker processes are
        # in `_processes` (CPython 3.9-3.14).
        processes = list((getattr(pool, "_processes", None) or {}).values())
        for process in processes:
            try:
                process.terminate()
            except Exception:
                pass
        try:
            pool.shutdown(wait=False, cancel_futures=True)
        except Exception:
            pass
        for process in processes:
            try:
                process.join(1.0)
            except Exception:
                pass

    def shutdown(self) -> None:
        if self.pool is not None:
            try:
                self.pool.shutdown(wait=True)
            except Exception:
                pass
            self.pool = None
