"""The command line: a thin shell over `rankcheck.api`.

Every subcommand is one entry of `COMMANDS` (its name, where its `main(argv) -> int` lives, the
line `rankcheck --help` shows, and the extra that installs what it needs); `rankcheck PATHS...`
without a subcommand is `check`.

Exit codes (ruff's): 0 no findings, 1 findings, 2 usage, configuration or internal error; 130
after Ctrl-C, 143 after SIGTERM.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import Dict, List, NamedTuple, NoReturn, Optional, Sequence, Tuple

from rankcheck import __version__
from rankcheck.report import FORMATS, ReportContext, get_renderer

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 128 + signal.SIGINT  # what a shell reports for a process Ctrl-C ended
EXIT_TERMINATED = 128 + signal.SIGTERM

# Where rankcheck installs from until it is on PyPI (README "Set up and try it").
GIT_URL = "git+https://github.com/rankcheck/rankcheck"


def install_hint(extra: str) -> str:
    """The pip command that installs rankcheck with `extra` (no release is on PyPI yet)."""
    return f"pip install 'rankcheck[{extra}] @ {GIT_URL}' (or, in a checkout: pip install -e '.[{extra}]')"


class Command(NamedTuple):
    name: str
    target: str  # "module:function"; the function takes argv (without the name) and returns the exit code
    help: str  # one line for `rankcheck --help`
    extra: Optional[str] = None  # the optional dependencies it needs (`pip install 'rankcheck[extra]'`)


# Every subcommand, one line each, in the order `rankcheck --help` lists them.
COMMANDS: Dict[str, Command] = {c.name: c for c in (
    Command("check", "rankcheck.cli:check_main", "find collectives that only some ranks reach (the default command)"),
    Command("rule", "rankcheck.cli:rule_main", "a rule's documentation (`rankcheck rule RC101`; `--all` lists the rules)"),
    Command("verify", "rankcheck.verify.cli:main", "replay a script or function on real gloo ranks and report where they diverge", "verify"),
    Command("fr", "rankcheck.fr.cli:main", "post-mortem of a hung job's flight-recorder dumps or guard bundle: which rank, why"),
    Command("lsp", "rankcheck.integrations.lsp_server:main", "the language server over stdio, for editors", "lsp"),
    Command("daemon", "rankcheck.integrations.daemon:main", "status or stop of the background process `--daemon` starts"),
    Command("run", "rankcheck.runtime.cli:run_main", "run a training job with the run-time guard armed: a hang is diagnosed in seconds"),
    Command("dump", "rankcheck.runtime.cli:dump_main", "collect every rank's evidence from a running armed job now"),
    Command("stacks", "rankcheck.runtime.cli:stacks_main", "group hand-gathered per-rank stack dumps and name the ranks that are elsewhere"),
)}


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the run is so that it stops as Ctrl-C stops it (exit 143)."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated()


class UsageError(Exception):
    """A mistake in what the user asked for (exit 2, the message without "internal error")."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 too; keep its words, add ours
        self.print_usage(sys.stderr)
        sys.stderr.write(f"rankcheck: error: {message}\n")
        raise SystemExit(EXIT_ERROR)


def _codes(value: str) -> List[str]:
    return [c.strip().upper() if c.strip().upper() != "ALL" else "ALL" for c in value.split(",") if c.strip()]


def _format_spec(value: str) -> Tuple[str, Optional[str]]:
    name, sep, target = value.partition(":")
    if name not in FORMATS:
        raise argparse.ArgumentTypeError(f"unknown format {name!r} (choose from {', '.join(sorted(FORMATS))})")
    return name, (target if sep else None)


def _commands_help() -> str:
    width = max(len(name) for name in COMMANDS) + 2
    lines = [f"  {c.name:<{width}}{c.help}" for c in COMMANDS.values()]
    return "commands (`rankcheck COMMAND --help` for each):\n" + "\n".join(lines)


def build_check_parser(prog: str = "rankcheck") -> argparse.ArgumentParser:
    """The options of `check`; as `rankcheck` (no subcommand named) its help lists every command."""
    top = prog == "rankcheck"
    p = _Parser(
        prog=prog,
        usage=f"{prog} {'[COMMAND] ' if top else ''}[options] [PATHS ...]",
        description="Find the source-level causes of hung distributed PyTorch jobs."
        + ("\n\n" + _commands_help() if top else ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="*", help="files or directories to report on (default: .)")
    p.add_argument(
        "--format",
        "--output-format",
        dest="formats",
        action="append",
        type=_format_spec,
        metavar="FORMAT[:FILE]",
        help="concise, full (default), json, json-lines, sarif, github, lsp; repeat for several, "
        "`sarif:results.sarif` writes that one to a file",
    )
    p.add_argument("--output", "--output-file", "-o", dest="output", help="write the output to FILE instead of stdout")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--statistics", action="store_true", help="print a count per rule after the findings")
    p.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to enable (replaces the configured set)")
    p.add_argument("--extend-select", type=_codes, default=[], help="codes or prefixes to enable in addition")
    p.add_argument("--ignore", type=_codes, default=[], help="codes or prefixes to disable")
    p.add_argument("--warn-unused-ignores", action="store_true", default=None, help="report suppressions that suppress nothing (RC003)")
    p.add_argument("--report-tests", action="store_true", default=None,
                   help="report findings in test code too (tests/ folders, test_*.py, modules importing pytest); "
                   "by default they are read for context only (also `report-tests = true`)")
    p.add_argument("--root", help="project root for the call graph (default: nearest pyproject.toml, else setup.py, setup.cfg or repository top)")
    p.add_argument("--force-exclude", action="store_true", help="apply exclude patterns to paths named on the command line too")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the summary cache")
    p.add_argument("--cache-dir", default=os.environ.get("RANKCHECK_CACHE_DIR"), help="where the summary cache lives (default: <root>/.rankcheck_cache; also RANKCHECK_CACHE_DIR)")
    p.add_argument("--jobs", "-j", type=int, default=None, help="processes for summarizing (default: the machine's cores)")
    p.add_argument(
        "--daemon",
        action="store_true",
        default=os.environ.get("RANKCHECK_DAEMON", "") not in ("", "0"),
        help="check through the project's background process, which keeps the analysis in memory: after an edit only "
        "what it changed is analysed again (starts one when none runs; `rankcheck daemon stop` ends it; also RANKCHECK_DAEMON=1)",
    )
    p.add_argument("--fix", action="store_true", help="apply the safe fixes in place (the findings left are reported)")
    p.add_argument("--diff", action="store_true", help="print the fixes as a unified diff instead of writing them")
    p.add_argument("--unsafe-fixes", action="store_true", help="include the fixes that may change behaviour (shown as such)")
    p.add_argument("--verify", action="store_true", help="replay each finding on two real gloo ranks (runs your code; needs torch)")
    p.add_argument("--version", action="version", version=f"rankcheck {__version__}")
    return p


def rule_main(argv: Sequence[str]) -> int:
    from rankcheck.rules_meta import all_rules, get_rule, known_code

    p = _Parser(prog="rankcheck rule", description="Show a rule's documentation.")
    p.add_argument("code", nargs="?")
    p.add_argument("--all", action="store_true", help="list every rule")
    args = p.parse_args(list(argv))
    if args.all or not args.code:
        for rule in all_rules():
            default = "" if rule.default else "  (off by default)"
            print(f"{rule.code}  {rule.name:<34} {rule.summary}{default}")
        return EXIT_OK
    code = args.code.upper()
    if not known_code(code):
        sys.stderr.write(f"rankcheck: unknown rule code {args.code!r}; `rankcheck rule --all` lists them\n")
        return EXIT_ERROR
    print(get_rule(code).doc().rstrip("\n"))
    return EXIT_OK


def _write(text: str, target: Optional[str]) -> None:
    # A file name that is not valid UTF-8 (any bytes are legal on Linux) reaches here as lone
    # surrogates: written back as the bytes it was, never an encoding error.
    if target is None or target == "-":
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is None:  # a text-only stream (an in-process caller's StringIO)
            sys.stdout.write(text)
            sys.stdout.flush()
            return
        sys.stdout.flush()
        buffer.write(text.encode(sys.stdout.encoding or "utf-8", "surrogateescape"))
        buffer.flush()
        return
    path = Path(target)
    try:
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UsageError(f"cannot write the output to {target}: {reason}") from exc


def check_main(argv: Sequence[str], prog: str = "rankcheck check") -> int:
    from rankcheck.api import run_check
    from rankcheck.config import validate_cli_codes

    args = build_check_parser(prog).parse_args(list(argv))
    problems = []
    for option, codes in (("--select", args.select or []), ("--extend-select", args.extend_select), ("--ignore", args.ignore)):
        problems.extend(validate_cli_codes(codes, option))
    if args.root is not None and not Path(args.root).is_dir():
        problems.append(f"--root {args.root}: no such directory")
    if args.jobs is not None and args.jobs < 1:
        problems.append(f"--jobs must be at least 1 (got {args.jobs})")
    if problems:
        for problem in problems:
            sys.stderr.write(f"rankcheck: error: {problem}\n")
        return EXIT_ERROR
    paths = args.paths or ["."]
    if args.paths:
        paths = [p for p in args.paths if not _named_non_python(p)]
        if not paths:  # every named file was skipped: checking "." instead would be a surprise
            sys.stderr.write("rankcheck: warning: No Python files found under the given path(s)\n")
            return EXIT_OK
    options = dict(
        root=args.root,
        select=args.select,
        extend_select=args.extend_select,
        ignore=args.ignore,
        warn_unused_ignores=args.warn_unused_ignores,
        report_tests=args.report_tests,
        force_exclude=args.force_exclude,
        use_cache=not args.no_cache,
        cache_dir=args.cache_dir,
        jobs=args.jobs,
    )
    result = _check_with_daemon(paths, options) if args.daemon else None
    if result is None:
        result = run_check(paths, **options)
    findings = result.findings
    if args.fix or args.diff:
        from rankcheck.fix.apply import fix_or_diff

        findings, status = fix_or_diff(findings, lambda: run_check(paths, **options).findings, args, lambda text: _write(text, args.output))
        if status is not None:
            return status
    if not result.files_checked and not result.config_errors:
        sys.stderr.write("rankcheck: warning: No Python files found under the given path(s)\n")
    if result.cache_unwritable:
        sys.stderr.write(f"rankcheck: warning: cannot write the cache at {result.cache_unwritable}; this run keeps nothing for the next (--cache-dir DIR, or --no-cache)\n")
    if result.hidden_in_tests:
        count = result.hidden_in_tests
        sys.stderr.write(
            f"rankcheck: {count} finding{'s' if count != 1 else ''} in test code not shown "
            "(--report-tests, or `report-tests = true` in [tool.rankcheck], shows them)\n"
        )
    if args.verify:
        try:
            verify = importlib.import_module("rankcheck.verify")
        except ImportError as exc:
            sys.stderr.write(f"rankcheck: --verify is unavailable: {exc}\n")
            return EXIT_ERROR
        findings = verify.verify_findings(findings, root=result.root)
    from rankcheck.fix.apply import with_fixes

    findings = with_fixes(findings, args)
    formats = args.formats or [("full", None)]
    unwritten = False
    for index, (name, target) in enumerate(formats):
        ctx = ReportContext(
            format=name,
            root=str(result.root),
            show_statistics=args.statistics and name in ("concise", "full", "text"),
            files_checked=result.files_checked,
            unsafe_fixes=args.unsafe_fixes,
        )
        text = get_renderer(name)(findings, ctx)
        try:
            _write(text, target if target is not None else (args.output if index == 0 else None))
        except UsageError as exc:  # the other outputs are still written
            sys.stderr.write(f"rankcheck: error: {exc}\n")
            unwritten = True
    if result.config_errors or unwritten:
        return EXIT_ERROR
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_OK


def _named_non_python(name: str) -> bool:
    """A named file that is neither .py/.pyi nor a script with a python shebang (as pre-commit's
    `types: [python]` decides): skipped with a warning, as ruff skips a named README.md."""
    path = Path(name)
    if path.suffix in (".py", ".pyi") or not path.is_file():
        return False  # a missing path is reported as RC001
    try:
        with open(path, "rb") as handle:
            first = handle.readline(256)
    except OSError:
        return False  # unreadable: RC001 says why
    if first.startswith(b"#!") and b"python" in first:
        return False
    sys.stderr.write(f"rankcheck: warning: {name} is not a Python file (.py, .pyi or a python shebang); skipped\n")
    return True


def _check_with_daemon(paths: Sequence[str], options: dict):
    """The check run by the project's daemon, or None (said on stderr) when it cannot be."""
    from rankcheck.driver.discover import find_root, safe_resolve
    from rankcheck.integrations import daemon

    root = safe_resolve(Path(options["root"])) if options["root"] else find_root([Path(p) for p in paths])
    try:
        return daemon.check(paths, root, {**options, "root": str(root)})
    except daemon.DaemonUnavailable as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        sys.stderr.write(f"rankcheck: the daemon is unavailable ({reason}); checking in this process\n")
        return None


def _run_command(command: Command, argv: Sequence[str]) -> int:
    module_name, _, function = command.target.partition(":")
    try:
        entry = getattr(importlib.import_module(module_name), function)
    except ImportError as exc:
        hint = f"; install it with: {install_hint(command.extra)}" if command.extra else ""
        sys.stderr.write(f"rankcheck {command.name}: unavailable ({exc}){hint}\n")
        return EXIT_ERROR
    return int(entry(list(argv)) or 0)


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in COMMANDS:
            return _run_command(COMMANDS[argv[0]], argv[1:])
        return check_main(argv, prog="rankcheck")
    except KeyboardInterrupt as exc:
        sys.stderr.write("rankcheck: terminated\n" if isinstance(exc, Terminated) else "rankcheck: interrupted\n")
        return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
    except UsageError as exc:
        sys.stderr.write(f"rankcheck: error: {exc}\n")
        return EXIT_ERROR
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (EXIT_OK if code is None else EXIT_ERROR)
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:
        sys.stderr.write(f"rankcheck: internal error: {type(exc).__name__}: {exc}\n")
        if os.environ.get("RANKCHECK_DEBUG"):
            traceback.print_exc()
        else:
            sys.stderr.write("rankcheck: set RANKCHECK_DEBUG=1 for the traceback, and please report it\n")
        return EXIT_ERROR


def console_main() -> None:
    """The `rankcheck` command. After a check, the process ends without tearing down what the
    analysis built (as mypy does): freeing a large project's program graph object by object costs
    seconds and changes nothing. Output is flushed first; subcommands exit the usual way.

    A check runs without the automatic cyclic collector: the summaries and the analysis are
    millions of objects that hold almost no cycles, and each automatic collection after the
    summarizer's pauses (`driver.pool.gc_paused`) would walk them all again (2-3 s of an 8 s run on
    Megatron-LM after an edit, for the same peak memory). The few cycles libcst leaves behind are
    still collected as files are summarized (`driver.pool.GC_EVERY`). The long-running commands
    (the language server, the daemon) keep it. A check turns SIGTERM into `Terminated`, so that
    it stops as after Ctrl-C: worker processes ended, the summaries already computed kept."""
    argv = sys.argv[1:]
    subcommand = bool(argv) and argv[0] in COMMANDS and argv[0] != "check"
    if not subcommand:
        gc.disable()
        signal.signal(signal.SIGTERM, _raise_terminated)
    code = main(argv)
    if subcommand:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):
        pass
    os._exit(code)

