"""`rankcheck verify`: replay a script or a function on real gloo ranks and report divergences.

    rankcheck verify train.py [--nproc N] [--timeout S] [-- script args...]
    rankcheck verify pkg/module.py::function [--fixture module:func]

Exit codes: 0 no divergence; 1 a divergence or hang was seen; 2 usage error, torch missing, or no
verdict (user code raised, the time limit struck, the code needs a GPU, or nothing ran: no rank
issued a collective, as when the file only defines functions).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import signal
import sys
from typing import Optional, Sequence

from rankcheck.ftypes import Finding
from rankcheck.report.json_format import finding_dict
from rankcheck.verify.render import INSTALL_HINT, render_result, verdict_counts
from rankcheck.verify.vtypes import CLEAN, DIVERGED, TIMEOUT, TORCH_MISSING, RunResult

EXIT_CLEAN = 0
EXIT_DIVERGED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would sys.exit(2); we return 2
        raise _Usage(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rankcheck verify",
        description="Replay a script (or one function) on real gloo ranks on CPU, stop it the "
        "moment the ranks' collectives diverge, and confirm or refute the static findings.",
        epilog="Arguments after `--` are passed to the script. It runs your code: only run it on "
        "code you trust.",
    )
    parser.add_argument("target", help="train.py, or path/to/module.py::function")
    parser.add_argument("--nproc", type=int, default=2, help="number of ranks (default 2)")
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="wall-clock limit per replay, seconds (60)"
    )
    parser.add_argument(
        "--fixture", default="", help="module:func returning the function's arguments"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--no-static", action="store_true", help="do not run the static analysis first"
    )
    parser.add_argument(
        "--show-output", action="store_true", help="print each rank's output (tail)"
    )
    parser.add_argument("--html", metavar="FILE", help="also write the timelines as an HTML page")
    return parser


def _split(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    argv = list(argv)
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1 :]
    return argv, []


def torch_available() -> bool:
    """Without importing it (that costs a second): is there a torch for the ranks to import?"""
    if "torch" in sys.modules and sys.modules["torch"] is None:
        return False
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def _static_findings(path: str) -> tuple[list[Finding], str]:
    """The hang findings the static analysis reports for the target file."""
    try:
        import rankcheck
        from rankcheck.rules_meta import get_rule

        findings = rankcheck.check_paths([path])
    except Exception as exc:  # the analyzer must never stop a replay
        return (
            [],
            f"static analysis unavailable ({type(exc).__name__}: {exc}); verdicts below are the replay's alone",
        )

    def is_hang(finding: Finding) -> bool:
        try:
            return get_rule(finding.code).family == "hang"
        except KeyError:
            return finding.code.startswith("RC1")

    hang = [f for f in findings if is_hang(f)]
    note = f"static analysis: {len(hang)} hang finding(s) in {os.path.relpath(path)}"
    return hang, note


def _exit_code(result: RunResult) -> int:
    outcome = result.outcome
    if outcome == DIVERGED or (outcome == TIMEOUT and result.hang_evidence()):
        return EXIT_DIVERGED
    if outcome == CLEAN and any(o.collectives for o in result.ranks):
        return EXIT_CLEAN
    return EXIT_USAGE  # no verdict, or nothing ran (not-reached): no reassurance either way


def _missing_arguments(path: str, function: str) -> Optional[str]:
    """The required parameters of `function` as `path` defines it at the top level ("model,
    batch"), or None when it takes none or is not a plain `def` there (then the replay decides)."""
    from rankcheck.verify.verdict import parse

    tree = parse(path)
    if tree is None or "." in function:
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            required = [a.arg for a in positional[: len(positional) - len(args.defaults)]]
            required += [a.arg for a, default in zip(args.kwonlyargs, args.kw_defaults) if default is None]
            return ", ".join(required) or None
    return None


def main(argv: Optional[Sequence[str]] = None) -> int:
    ours, script_args = _split(sys.argv[1:] if argv is None else argv)
    try:
        options = _parser().parse_args(ours)
    except _Usage as exc:
        _parser().print_usage(sys.stderr)
        print(f"rankcheck verify: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    path, _, function = options.target.partition("::")
    if not os.path.isfile(path):
        print(f"rankcheck verify: error: no such file: {path}", file=sys.stderr)
        return EXIT_USAGE
    if options.fixture and not function:
        print(
            "rankcheck verify: error: --fixture needs a path.py::function target", file=sys.stderr
        )
        return EXIT_USAGE
    needed = _missing_arguments(path, function) if function and not options.fixture else None
    if needed:
        print(
            f"rankcheck verify: error: {function}() takes arguments ({needed}); pass them with --fixture module:function, "
            "a function that returns them (a tuple of positional arguments, or a dict of keyword arguments)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if function and script_args:
        print("rankcheck verify: error: script arguments need a script target", file=sys.stderr)
        return EXIT_USAGE
    if options.nproc < 2 or options.timeout <= 0:
        print("rankcheck verify: error: --nproc must be >= 2 and --timeout > 0", file=sys.stderr)
        return EXIT_USAGE
    if not torch_available():
        print(INSTALL_HINT, file=sys.stderr)
        return EXIT_USAGE

    findings: list[Finding] = []
    static_note = ""
    if not options.no_static:
        findings, static_note = _static_findings(path)

    from rankcheck.verify import api
    from rankcheck.verify.verdict import judge, unpredicted, watch_lines

    as_json = options.format == "json"

    def announce(text: str) -> None:
        print(text, file=sys.stderr if as_json else sys.stdout, flush=True)

    previous = signal.getsignal(signal.SIGTERM)

    def on_term(signum, frame):
        raise KeyboardInterrupt

    if previous is not None:
        signal.signal(signal.SIGTERM, on_term)
    try:
        watch = watch_lines(findings)
        if function:
            result = api.run_function(
                path,
                function,
                fixture=options.fixture,
                nproc=options.nproc,
                timeout=options.timeout,
                watch=watch,
                announce=announce,
            )
        else:
            result = api.run_script(
                path,
                script_args,
                nproc=options.nproc,
                timeout=options.timeout,
                watch=watch,
                announce=announce,
            )
    except KeyboardInterrupt:
        print("rankcheck verify: interrupted; every rank was stopped", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)

    if result.outcome == TORCH_MISSING:
        print(INSTALL_HINT, file=sys.stderr)
        return EXIT_USAGE
    judged = [judge(f, result) for f in findings]
    extra = unpredicted(result, judged)
    if extra is not None:
        judged.append(extra)
    html_problem = None
    if options.html:
        from rankcheck.report.html_timeline import verify_page, write_page

        html_problem = write_page(options.html, verify_page(result, judged))
        if html_problem:
            print(f"rankcheck verify: error: cannot write {options.html}: {html_problem}", file=sys.stderr)
    if as_json:
        payload = {"result": result.to_dict(), "findings": [finding_dict(f) for f in judged]}
        print(json.dumps(payload, indent=2))
    else:
        counts = verdict_counts(judged)
        if static_note:
            note = static_note + (f" ({counts})" if counts else "")
        else:
            note = f"verdicts: {counts}" if counts else ""
        sys.stdout.write(
            render_result(result, judged, static_note=note, show_output=options.show_output)
        )
    return EXIT_USAGE if html_problem else _exit_code(result)


if __name__ == "__main__":
    sys.exit(main())
