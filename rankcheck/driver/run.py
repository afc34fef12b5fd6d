"""One run of the static analysis: what runs in what order and what is reused.

configuration and catalog -> discover the files -> summaries (cached, in parallel, parsed on
demand) -> the analysis (whole program, or focused on the files reported on) -> the rules ->
cascades, selection, per-file ignores and suppressions -> findings. A workspace (the language
server's, the daemon's) keeps summaries, program and memo from one run to the next; a result
store answers a run whose inputs all match an earlier one's.
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Dict,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from rankcheck.catalog import CatalogError, catalog_digest, load_catalog
from rankcheck.checks import RULES
from rankcheck.config import Config, ConfigError, load_config, merge_cli
from rankcheck.driver.analysis import Analysis, analyse
from rankcheck.driver.cache import ResultStore, ensure_layout
from rankcheck.driver.discover import (
    SourceFile,
    defines_tests,
    discover,
    display_path,
    find_root,
    imports_a_test_framework,
    in_test_directory,
    matches_any,
    named_as_test_module,
    safe_resolve,
)
from rankcheck.driver.identity import diagnostics as identity_diagnostics
from rankcheck.driver.pool import gc_paused
from rankcheck.driver.summaries import PipelineOptions, collect_summaries, results_key
from rankcheck.driver.suppress import apply_suppressions, drop_cascades, filter_codes
from rankcheck.ftypes import ERROR, Finding, Location
from rankcheck.program.ir import MODULE_FUNCTION, ModuleSummary, Suppression
from rankcheck.rules_meta import get_rule
from rankcheck.sequences.flatten import MAX_EVENTS

if TYPE_CHECKING:
    from rankcheck.driver.workspace import Workspace

PathLike = Union[str, Path]
DEFAULT_CACHE_DIRNAME = ".rankcheck_cache"
RECURSION_LIMIT = 10_000


@dataclass
class CheckResult:
    findings: List[Finding]
    files_checked: int = 0  # files reported on
    files_read: int = 0  # including context
    config_errors: int = 0
    root: Path = field(default_factory=Path.cwd)
    analysis: Optional[Analysis] = field(default=None, repr=False)  # the linked program, for queries
    hidden_in_tests: int = 0  # findings in test code, not reported (Config.report_tests)
    cache_unwritable: Optional[str] = None  # the cache directory that could not be written: nothing kept


def _config_finding(error: Union[ConfigError, CatalogError], fallback: Path) -> Finding:
    path = getattr(error, "path", None) or fallback
    return Finding(
        code="RC002",
        message=str(error),
        location=Location(display_path(Path(path)), getattr(error, "line", 1), getattr(error, "column", 1)),
        severity=ERROR,
    )


def run_check(
    paths: Sequence[PathLike],
    *,
    root: Optional[PathLike] = None,
    config: Optional[Config] = None,
    sources: Optional[Mapping[str, str]] = None,
    select: Optional[Sequence[str]] = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    warn_unused_ignores: Optional[bool] = None,
    force_exclude: bool = False,
    context: bool = True,
    use_cache: bool = False,
    cache_dir: Optional[PathLike] = None,
    jobs: Optional[int] = None,
    workspace: Optional[Workspace] = None,
    report_tests: Optional[bool] = None,
) -> CheckResult:
    """See check_paths. With a `workspace` (the language server's), the summaries, the linked
    program and the interpreter's memo of the previous run over the same project are reused."""
    with workspace.lock if workspace is not None else contextlib.nullcontext():
        return _run_check(paths, root, config, sources, select, extend_select, ignore, warn_unused_ignores,
                          force_exclude, context, use_cache, cache_dir, jobs, workspace, report_tests)


def _run_check(
    paths: Sequence[PathLike],
    root: Optional[PathLike],
    config: Optional[Config],
    sources: Optional[Mapping[str, str]],
    select: Optional[Sequence[str]],
    extend_select: Sequence[str],
    ignore: Sequence[str],
    warn_unused_ignores: Optional[bool],
    force_exclude: bool,
    context: bool,
    use_cache: bool,
    cache_dir: Optional[PathLike],
    jobs: Optional[int],
    workspace: Optional[Workspace],
    report_tests: Optional[bool],
) -> CheckResult:
    # Deep call chains and deeply nested code recurse through the interpreter; the default limit
    # of 1,000 frames is far below what the main thread's stack holds.
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    given = [Path(p) for p in paths] or [Path.cwd()]
    root_path = safe_resolve(Path(root)) if root is not None else find_root(given)
    findings: List[Finding] = []
    config_errors = 0
    if config is None:
        try:
            config = load_config(root_path / "pyproject.toml")
        except ConfigError as exc:
            findings.append(_config_finding(exc, root_path / "pyproject.toml"))
            config_errors += 1
            config = Config()
    config = merge_cli(config, select=select, extend_select=extend_select, ignore=ignore, warn_unused_ignores=warn_unused_ignores,
                       report_tests=report_tests)
    try:
        catalog = (
            load_catalog()
            .with_extras(config.extra_collectives, config.extra_rank_sources)
            .with_rank_zero_only(config.rank_zero_only_decorators)
        )
    except CatalogError as exc:
        findings.append(_config_finding(exc, root_path))
        return CheckResult(findings, config_errors=config_errors + 1, root=root_path)

    readable = []
    for p in given:
        problem = _unreadable_path(p, sources)
        if problem is None:
            readable.append(p)
        else:
            findings.append(Finding("RC001", f"{problem}: {p}", Location(str(p), 1, 1), ERROR))

    if root is None and len(given) > 1 and root_path == Path(root_path.anchor):
        # Paths under unrelated directories (`/tmp/x.py src/y.py`) have only the filesystem root
        # in common: reading the project around them would read the whole disk, and the cache
        # would live at its top. They are read alone, and the user is told how to choose.
        sys.stderr.write(f"rankcheck: the paths given share no directory below {root_path}; only they are read, "
                         "without a project around them and without the cache (pass --root DIR to choose one)\n")
        context = False
        use_cache = False
    if use_cache and cache_dir is None:
        cache_dir = root_path / DEFAULT_CACHE_DIRNAME
    options = PipelineOptions(cache_dir=Path(cache_dir) if use_cache and cache_dir is not None else None, jobs=jobs)
    # A cache that cannot be written still lets the run go on, but says so (the next run pays again).
    cache_unwritable = str(options.cache_dir) if options.cache_dir is not None and not ensure_layout(options.cache_dir) else None
    if workspace is not None:
        # Before its discovery: a change of settings starts the workspace afresh, forgetting the
        # last walk too (which would otherwise be walked again on the next run after the first).
        workspace.settle("\n".join((str(root_path), repr(config), f"{context} {force_exclude} {options.prefilter}", catalog_digest())))
    unreadable_dirs: list[tuple[str, str]] = []
    if workspace is not None:
        files = workspace.discover(readable, root_path, config.exclude, config.extend_exclude, force_exclude, context, unreadable_dirs)
    else:
        files = discover(readable, root_path, config.exclude, config.extend_exclude, force_exclude, context=context, unreadable=unreadable_dirs)
    for directory, reason in unreadable_dirs:
        message = f"cannot read directory: {reason}; the files in it were not analysed"
        findings.append(Finding("RC001", message, Location(directory, 1, 1), ERROR))
    overrides: Dict[str, str] = {str(safe_resolve(Path(k))): v for k, v in (sources or {}).items()}
    # Nothing changed since a run with the same inputs: its findings are the answer (the analysis
    # is the bulk of a run whose summaries are all cached). Not for unsaved buffers (the language
    # server's): every edit is a new state that is rarely seen again, and keying and storing a
    # run on each would cost every edit for the odd undo.
    results = ResultStore(options.cache_dir) if options.cache_dir is not None and not overrides else None
    run_inputs = _run_inputs(given, root_path, config, context, force_exclude, findings)
    key = results_key(files, overrides, options, run_inputs) if results is not None else None
    if results is not None and key is not None:
        cached = results.load(key)
        if isinstance(cached, tuple) and len(cached) == 4 and isinstance(cached[0], list):
            if os.environ.get("RANKCHECK_STATS", "") not in ("", "0"):
                sys.stderr.write(f"rankcheck: {len(files)} files unchanged since a run with the same inputs: its findings\n")
            return CheckResult(list(cached[0]), files_checked=cached[1], files_read=cached[2], config_errors=config_errors, root=root_path,
                               hidden_in_tests=cached[3], cache_unwritable=cache_unwritable)
    if workspace is not None:
        summaries: List[ModuleSummary] = workspace.summaries(files, overrides, catalog, options)
    else:
        summaries = collect_summaries(files, overrides, catalog, options)
    reported: Dict[str, SourceFile] = {}
    suppressions: Dict[str, Tuple[Suppression, ...]] = {}
    test_code: Set[str] = set()  # reported files that are test code, their findings held back
    named_files = {safe_resolve(p) for p in readable}
    test_modules = _test_code(files, summaries, root_path)
    for source, summary in zip(files, summaries):
        if source.report:
            reported[source.display] = source
            suppressions[source.display] = summary.suppressions
            if not config.report_tests and source.path not in named_files and summary.module in test_modules:
                test_code.add(source.display)
            if summary.problem is not None:
                parse = summary.problem
                findings.append(Finding("RC001", parse.message, Location(source.display, parse.line, parse.column), ERROR))
    # What is ambiguous about the reported files' modules and imports (RC004): warnings, suppressible.
    findings.extend(identity_diagnostics(files, summaries))

    enabled = config.enabled_codes()
    # The analysis allocates millions of small objects and frees few: the cyclic collector would
    # re-scan the growing heap again and again (more than half the analysis time on Megatron-LM).
    with gc_paused():
        # Reporting on some files only (pre-commit, the language server): analyse just what can
        # change their findings; the whole project still supplies the call graph (driver.analysis.analyse).
        focus = None
        if len(reported) < len(files):
            focus = {summary.path for source, summary in zip(files, summaries) if source.report}
        # What tests pass to library functions is not what the library is given in use.
        tests = frozenset(test_modules)
        if workspace is not None:
            analysis = workspace.analyse(summaries, catalog, focus, tests)
        else:
            analysis = analyse(summaries, catalog, focus=focus, test_modules=tests)
        seen = set()
        for code, rule in RULES.items():
            if code not in enabled:
                continue
            for finding in rule.check(analysis):
                identity = (finding.code, finding.location.path, finding.location.line, finding.location.column)
                if finding.location.path not in reported or identity in seen:
                    continue
                seen.add(identity)
                findings.append(finding)
        if "RC005" in enabled:
            findings.extend(f for f in _too_large_to_compare(analysis) if f.location.path in reported)

    per_file: Dict[str, frozenset] = {}
    for display in reported:
        codes: Set[str] = set()
        for pattern, ignored in config.per_file_ignores:
            if matches_any(display, [pattern]):
                codes.update(c for c in enabled if any(c.startswith(i) or i == "ALL" for i in ignored))
        if codes:
            per_file[display] = frozenset(codes)
    findings = drop_cascades(findings)
    findings = filter_codes(findings, enabled, per_file)
    findings = apply_suppressions(findings, suppressions, report_unused="RC003" in enabled)
    hidden = [f for f in findings if f.location.path in test_code and _about_the_code(f)]
    if hidden:
        findings = [f for f in findings if not (f.location.path in test_code and _about_the_code(f))]
    findings.sort(key=lambda f: (f.location.path, f.location.line, f.location.column, f.code))
    if results is not None:
        key = results_key(files, overrides, options, run_inputs)  # every file's digest is known now
        if key is not None:
            results.store(key, (findings, len(reported), len(files), len(hidden)))
    return CheckResult(
        findings, files_checked=len(reported), files_read=len(files), config_errors=config_errors, root=root_path, analysis=analysis,
        hidden_in_tests=len(hidden), cache_unwritable=cache_unwritable,
    )


def _about_the_code(finding: Finding) -> bool:
    """A finding about the code's hazards, which test code does not report unless asked: every
    rule's but the tool's own diagnostics of its input, and among those the note that a function
    was too large to check (it stands in for the hazard findings it could not make)."""
    return get_rule(finding.code).family != "tool" or finding.code == "RC005"


def _too_large_to_compare(analysis: Analysis) -> List[Finding]:
    """RC005 at each function whose classes of ranks were too large to compare: its RC101-RC106
    are not known, and a silent pass would read as a clean one."""
    rule = get_rule("RC005")
    found = []
    for qual in sorted(analysis.too_large):
        fn = analysis.program.functions[qual]
        where = Location(analysis.program.path_of_function[qual], fn.span.line, fn.span.column, fn.span.end_line, fn.span.end_column)
        what = "the module's top-level code" if fn.name == MODULE_FUNCTION else f"`{fn.name}`"
        found.append(Finding(rule.code, rule.render("too_large", function=what, limit=MAX_EVENTS), where, rule.severity))
    return found


def _test_code(files: Sequence[SourceFile], summaries: Sequence[ModuleSummary], root: Path) -> Set[str]:
    """The modules that are test code: where they live (a tests/ folder), what they import (pytest,
    unittest), or their name (test_*.py, *_test.py, conftest.py). A module named like a test that
    holds no test function and that the project's other code imports is the project's own code
    with a confusing name (mmf's `common/test_reporter.py`, which its data modules import to write
    predictions); test helpers and scripts named so (`test_utils.py`, a script a test launches)
    stay test code."""
    by_name: Set[str] = set()  # named like a test, holding none
    found: Set[str] = set()
    for source, summary in zip(files, summaries):
        try:
            relative = source.path.relative_to(root).as_posix()
        except ValueError:
            relative = source.path.name
        if in_test_directory(relative) or imports_a_test_framework(summary.imports):
            found.add(summary.module)
        elif named_as_test_module(relative):
            if relative.rsplit("/", 1)[-1] == "conftest.py" or defines_tests(fn.name for fn in summary.functions):
                found.add(summary.module)
            else:
                by_name.add(summary.module)
    if by_name:
        imported = {target for summary in summaries if summary.module not in found and summary.module not in by_name
                    for _, target in summary.imports}
        for module in by_name:
            if not any(target == module or target.startswith(module + ".") for target in imported):
                found.add(module)
    return found


def _run_inputs(given: Sequence[Path], root: Path, config: Config, context: bool, force_exclude: bool, early: List[Finding]) -> str:
    """Everything besides the files' contents that decides a run's findings, as text for the
    result cache's key: the paths asked for, the configuration, the catalog's knowledge and the
    diagnostics found before any file was read."""
    parts = [
        repr(sorted(str(safe_resolve(p)) for p in given)),
        str(root),
        repr(config),
        f"{context} {force_exclude}",
        catalog_digest(),
        repr([f.to_dict() for f in early]),
    ]
    return "\n".join(parts)


def _unreadable_path(path: Path, sources: Optional[Mapping[str, str]]) -> Optional[str]:
    """Why a path named on the command line cannot be analysed, or None."""
    try:
        if sources and str(safe_resolve(path)) in sources:
            return None
        if not path.exists():
            return "no such file or directory" if not path.is_symlink() else "a symbolic link to nowhere (or a loop)"
        if path.is_dir():
            os.listdir(path)
        return None
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop while resolving
        return f"cannot read: {getattr(exc, 'strerror', None) or exc}"
