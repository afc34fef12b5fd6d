"""`rankcheck fr DUMP_DIR_OR_FILES... [--source DIR] [--format text|json]`: post-mortem of a hang.

Given one run-time guard bundle (`rankcheck.runtime`: a directory with job.json), it reads the
whole bundle instead (flight-recorder dumps, heartbeats, stacks; `rankcheck.fr.bundle`).

Exit codes: 0 the dumps show no divergence or stall (every rank idle after the same collective),
1 they show a hang cause (mismatch, a rank behind or ahead, a missing dump, all ranks stuck in one
collective), 2 usage errors or unreadable dumps. Reading never imports torch.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, NoReturn, Optional, TextIO

from rankcheck.fr.analyze import analyze
from rankcheck.fr.bundle import analyze_bundle, is_bundle, write_verdict
from rankcheck.fr.model import DumpError
from rankcheck.fr.reader import read_dumps
from rankcheck.fr.render import render_json, render_text

EXIT_OK, EXIT_HANG, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 too; keep its usage line
        self.print_usage(sys.stderr)
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rankcheck fr",
        description=(
            "Read PyTorch flight-recorder dumps (one per rank, pickle or JSON, torch 2.4-2.13) "
            "and tell which rank diverged, at which collective, and on which line."
        ),
    )
    parser.add_argument(
        "dumps", nargs="+", metavar="DUMP_DIR_OR_FILES",
        help="dump files or directories holding them; file names end in the rank "
             "(torch writes <TORCH_FR_DUMP_TEMP_FILE prefix><rank>)",
    )
    parser.add_argument(
        "--source", metavar="DIR",
        help="the job's source tree: report whether `rankcheck check` flags the divergent line",
    )
    parser.add_argument(
        "--format", "--output-format", dest="format", choices=("text", "json"), default="text",
    )
    parser.add_argument(
        "--world-size", type=int, metavar="N",
        help="how many ranks the job had, so that ranks without a dump are named as missing "
             "(default: inferred from the dumps)",
    )
    parser.add_argument("--output", "--output-file", dest="output", metavar="FILE",
                        help="write the report to FILE instead of standard output")
    parser.add_argument("--html", metavar="FILE", help="also write the timelines as an HTML page")
    return parser


def main(argv: Optional[List[str]] = None, stdout: Optional[TextIO] = None) -> int:
    out = stdout or sys.stdout
    try:
        args = build_parser().parse_args(argv)
    except _UsageError as exc:
        print(f"rankcheck fr: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    if args.world_size is not None and args.world_size < 1:
        print("rankcheck fr: error: --world-size must be at least 1", file=sys.stderr)
        return EXIT_ERROR
    if args.source and not os.path.exists(args.source):
        print(f"rankcheck fr: error: --source {args.source}: no such file or directory",
              file=sys.stderr)
        return EXIT_ERROR
    if len(args.dumps) == 1 and is_bundle(args.dumps[0]):
        return _bundle(args.dumps[0], args.format, out)
    try:
        read = read_dumps(args.dumps)
    except DumpError as exc:
        print(f"rankcheck fr: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    analysis = analyze(
        read.dumps, world_size=args.world_size, source_root=args.source, ignored=read.ignored
    )
    if args.source:
        from rankcheck.fr.crossref import cross_reference

        analysis = cross_reference(analysis, args.source)
    text = render_json(analysis) if args.format == "json" else render_text(analysis)
    html_problem = None
    if args.html:
        from rankcheck.report.html_timeline import fr_page, write_page

        html_problem = write_page(args.html, fr_page(analysis))
        if html_problem:
            print(f"rankcheck fr: error: cannot write {args.html}: {html_problem}", file=sys.stderr)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            print(f"rankcheck fr: error: cannot write {args.output}: {exc}", file=sys.stderr)
            return EXIT_ERROR
    else:
        out.write(text)
    return EXIT_ERROR if html_problem else analysis.exit_code


def _bundle(path: str, fmt: str, out: TextIO) -> int:
    """A run-time guard's bundle: the verdict again (and written back into the bundle)."""
    verdict = analyze_bundle(path)
    try:
        write_verdict(path, verdict)
    except OSError as exc:
        print(f"rankcheck fr: warning: cannot write the verdict into {path}: {exc}", file=sys.stderr)
    if fmt == "json":
        import json

        out.write(json.dumps(verdict.as_json(), indent=1) + "\n")
    else:
        out.write(verdict.text)
    return EXIT_HANG if verdict.is_hang else EXIT_OK


if __name__ == "__main__":  # `python -m rankcheck.fr.cli ...` until `rankcheck fr` dispatches
    sys.exit(main(sys.argv[1:]))
