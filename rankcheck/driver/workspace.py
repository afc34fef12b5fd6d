"""Workspace: one project's summaries, linked program and interpreter memo, kept between runs.

The language server checks the open buffers again after every edit. Done from scratch, each run
would load every summary (from the cache), link the program, index who calls whom and interpret
every function that feeds the open files: seconds on a large project for an edit of one line.
A `Workspace` keeps all of that in memory and takes in only what changed:

* summaries: a file whose unsaved text, or whose stat (size, mtime, inode) on disk, is what it
  was last time keeps its summary; the others are summarized again;
* the program: when the changed modules keep their interface (`link.interface`: imports, names
  and signatures), their summaries are swapped in place (`Program.replace_modules`) and the
  caller graph and `global` writer indexes are patched; otherwise everything is linked again;
* the interpreter: its memo verifies every fact's inputs (interp.memo), so after an edit
  of a function body only the facts that read that body are interpreted again, and what was built
  on them only where what they give changed: an edit that moves a helper's lines but not what it
  returns leaves its callers' facts as they are (their findings show the helper's new lines).

The findings are the same as a run without a workspace (tests/test_workspace.py compares them
edit by edit, tests/test_fuzz.py over generated programs), with one known exception: recursion
that runs through a call the interpreter resolves from a value (a method of an object built at
run time, a module variable read while the module's own code calls back, a class attribute read
while a method that stores it runs) is cut where the call stack meets a function again, so which
function is cut short depends on the order they are first reached, and an edit can change that
order for a fresh run but not for the workspace. Recursion through calls resolved by name (the
static call graph's cycles, `Program.recursive_cycle`) is cut the same way whatever the order.
A change of configuration, catalog or mode starts the workspace afresh.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import threading
import time
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

from rankcheck.catalog import Catalog
from rankcheck.driver.analysis import Analysis, AnalysisState, analyse
from rankcheck.driver.cache import racily_clean, stat_key, text_digest
from rankcheck.driver.discover import SourceFile
from rankcheck.driver.discover import discover as discover_files
from rankcheck.driver.summaries import PipelineOptions, collect_summaries
from rankcheck.frontend.reparse import RecentParses
from rankcheck.program.ir import ModuleSummary

Fingerprint = Optional[Tuple]


class Workspace:
    """Summaries and analysis state of one project, reused by `run_check(..., workspace=...)`.
    One run at a time (a lock serialises them); not shared between projects."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # one run at a time
        self._settings: Optional[str] = None
        # path -> (content fingerprint, import map, summary): the map is an input of the summary
        # as the text is (a same-named file added elsewhere changes it, not the text)
        self._files: Dict[str, Tuple[Fingerprint, Tuple[Tuple[str, str], ...], ModuleSummary]] = {}
        self._state: Optional[AnalysisState] = None
        self._layout: Optional[Tuple] = None
        self.last_relinked = False  # for tests and the server's log: the last run linked afresh
        self._discovered: Optional[Tuple] = None
        self.recent_parses = RecentParses()  # the last trees of the files summarized here (edited buffers)

    def settle(self, settings: str) -> None:
        """Start afresh when what decides the analysis besides the files changed (configuration,
        catalog, root, mode)."""
        if settings != self._settings:
            self._settings = settings
            self._files.clear()
            self._state = None
            self._layout = None
            self._discovered = None

    # ---------------------------------------------------------------------------- files
    def discover(self, paths: Sequence[Path], root: Path, exclude: Sequence[str], extend_exclude: Sequence[str],
                 force_exclude: bool, context: bool, unreadable: list) -> List[SourceFile]:
        """`discover.discover`, answered from the last walk when no directory it listed has
        changed (a file added, removed or renamed changes its directory's mtime) and the files
        named are the same; the working directory is part of the key (display paths)."""
        key = (tuple(str(p) for p in paths), str(root), tuple(exclude), tuple(extend_exclude), force_exclude, context, os.getcwd())
        cached = self._discovered
        if cached is not None and cached[0] == key and all(_mtime(d) == m for d, m in cached[1]):
            unreadable.extend(cached[3])
            return list(cached[2])
        visited: List[Path] = []
        found: list = []
        files = discover_files(paths, root, exclude, extend_exclude, force_exclude, context=context, unreadable=found, visited=visited)
        unreadable.extend(found)
        stamps = tuple((d, _mtime(d)) for d in visited)
        now = time.time_ns()
        if all(m is not None and not racily_clean(m, now) for _, m in stamps):
            self._discovered = (key, stamps, tuple(files), tuple(found))
        else:
            self._discovered = None
        return files

    # ---------------------------------------------------------------------------- summaries
    def summaries(self, files: Sequence[SourceFile], overrides: Dict[str, str], catalog: Catalog, options: PipelineOptions) -> List[ModuleSummary]:
        out: List[Optional[ModuleSummary]] = [None] * len(files)
        missing: List[int] = []
        prints: List[Fingerprint] = []
        for index, source in enumerate(files):
            key = str(source.path)
            text = overrides.get(key)
            fingerprint = ("text", text_digest(text)) if text is not None else _stat_fingerprint(source)
            prints.append(fingerprint)
            known = self._files.get(key)
            if (
                known is not None
                and fingerprint is not None
                and known[0] == fingerprint
                and known[1] == source.import_map
                and known[2].module == source.module
                and known[2].path == source.display
                and known[2].is_package == source.is_package
            ):
                out[index] = known[2]
            else:
                missing.append(index)
        if missing:
            # Every file is summarized in full: the demand-driven choice of what to parse is made
            # over the whole project (driver.selection) and an edit elsewhere can make a skipped file
            # matter. A full summary where a minimal one would do finds the same.
            run_options = dataclasses.replace(options, prefilter=False, recent_parses=self.recent_parses)
            fresh = collect_summaries([files[i] for i in missing], overrides, catalog, run_options)
            for index, summary in zip(missing, fresh):
                out[index] = summary
                self._files[str(files[index].path)] = (prints[index], files[index].import_map, summary)
        wanted = {str(source.path) for source in files}
        for key in [k for k in self._files if k not in wanted]:
            del self._files[key]
        return out  # type: ignore[return-value]

    # ---------------------------------------------------------------------------- analysis
    def analyse(self, summaries: Sequence[ModuleSummary], catalog: Catalog, focus, test_modules: FrozenSet[str] = frozenset()) -> Analysis:
        layout = (tuple((s.path, s.module, s.problem is None) for s in summaries), test_modules)
        state = self._state
        relink = state is None or layout != self._layout
        if not relink:
            program = state.program  # type: ignore[union-attr]
            changed = []
            for summary in summaries:
                current = program.modules.get(summary.module) if summary.problem is None else None
                if current is not None and current is not summary and current.path == summary.path:
                    changed.append(summary)
            replaced = program.replace_modules(changed)
            if replaced is None:
                relink = True
            else:
                state.replace_functions(*replaced)  # type: ignore[union-attr]
        if relink:
            state = AnalysisState.fresh(summaries, catalog, test_modules)
            self._state = state
            self._layout = layout
        self.last_relinked = relink
        analysis = analyse(None, catalog, focus=focus, state=state)
        if analysis.widened:
            # The roots it added were first run with what the rounds had learned by then
            # (bindings, module variables stored through `global`). The next analysis over this
            # focus (the first edit) starts every root from the first round, where nothing is
            # learned yet, and would interpret them there: 80 ms of Megatron-LM's first edit.
            # Done now, while the file is opened, with the same findings (the rest is memoised).
            analysis = analyse(None, catalog, focus=focus, state=state)
        state.interpreter.prune()  # type: ignore[union-attr]
        # What a run leaves is mostly kept for the next (summaries, the program, the memo): out of
        # the cyclic collector's sight, or its next full pass rescans millions of objects during
        # an edit (1.4 s on Megatron-LM). Facts and summaries let go later are still freed by
        # reference counting; they hold no cycles.
        gc.freeze()
        return analysis


def _mtime(directory: Path) -> Optional[int]:
    try:
        return os.stat(directory).st_mtime_ns
    except OSError:
        return None


def _stat_fingerprint(source: SourceFile) -> Fingerprint:
    """The file's stat, or None when it cannot be trusted to tell a change (`racily_clean`)."""
    try:
        st = os.stat(source.path)
    except OSError:
        return None
    if racily_clean(st.st_mtime_ns, time.time_ns()):
        return None
    return ("stat", stat_key(st))
