"""`rankcheck run`, `rankcheck dump` and `rankcheck stacks` (torch-free; `rankcheck.cli` only
dispatches here)."""

from __future__ import annotations

import argparse
import sys
from typing import List, NoReturn, Optional

from rankcheck.runtime.settings import Settings

EXIT_ERROR = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_ERROR)


def _positive(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be > 0")
    return number


def run_main(argv: List[str]) -> int:
    parser = _Parser(prog="rankcheck run", description=(
        "Run a job armed: every rank that initialises a process group publishes a heartbeat, a hang "
        "is detected in seconds, every rank's evidence goes into one bundle under the dump directory "
        "and a verdict names the rank, the collective, the line and the cause. No code change."),
        usage="rankcheck run [--dump-dir D] [options] -- LAUNCHER ARGS...")
    parser.add_argument("--dump-dir", default="rankcheck-hangs", help="where bundles go (shared storage "
                        "for multi-node jobs; default ./rankcheck-hangs)")
    parser.add_argument("--source", help="the source root for the static cross-reference (default: the "
                        "script's directory)")
    defaults = Settings()
    for name, help_text in (("floor_s", "the least time without progress that is a hang"),
                            ("factor", "a hang: this many median steps without progress"),
                            ("interval_s", "heartbeat interval"),
                            ("straggler_ratio", "a straggler computes this many times the others' median"),
                            ("evidence_wait_s", "how long to wait for every rank's evidence")):
        parser.add_argument("--" + name.replace("_", "-"), type=_positive, dest=name,
                            help=f"{help_text} (default {getattr(defaults, name)})")
    parser.add_argument("--job", help="the job's name in the dump directory (default: from the rendezvous, "
                        "the same on every node)")
    parser.add_argument("--check", action="store_true", help="consistency mode: cross-check every "
                        "collective's fingerprint between ranks before it runs (small test runs)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the launcher command after --, e.g. -- torchrun --nproc-per-node 8 train.py")
    from rankcheck.runtime.bundle import probe_writable
    from rankcheck.runtime.launch import Launcher

    try:
        probe_writable(args.dump_dir)
    except OSError as exc:
        parser.error(f"--dump-dir {args.dump_dir}: cannot write there ({exc.strerror or exc})")

    options = {n: getattr(args, n) for n in ("floor_s", "factor", "interval_s", "straggler_ratio",
                                             "evidence_wait_s") if getattr(args, n) is not None}
    if args.check:
        options["check"] = 1
    return Launcher(command, args.dump_dir, options, args.source, args.job).run()


def dump_main(argv: List[str]) -> int:
    parser = _Parser(prog="rankcheck dump", description=(
        "Make every rank of a running armed job write its evidence (flight recorder, stacks, "
        "heartbeats, environment) into a new bundle, and print the verdict."))
    parser.add_argument("--dump-dir", default="rankcheck-hangs", help="the job's dump directory")
    parser.add_argument("--job", help="which job (default: the one that published last)")
    parser.add_argument("--wait", type=_positive, default=10.0, help="seconds to wait for every rank")
    args = parser.parse_args(argv)
    from rankcheck.runtime.launch import dump

    return dump(args.dump_dir, args.job, args.wait)


def stacks_main(argv: List[str]) -> int:
    parser = _Parser(prog="rankcheck stacks", description=(
        "Group per-rank stack dumps (py-spy dump text or --json, faulthandler tracebacks, torch's "
        "debug-server stacks, a guard bundle) by where each rank is, and name the odd ones out."))
    parser.add_argument("dumps", nargs="+", metavar="DUMPS", help="files (one per rank; the rank is the "
                        "number in the name) or directories")
    parser.add_argument("--json", action="store_true", help="JSON output")
    args = parser.parse_args(argv)
    from rankcheck.runtime.stacks import group_stacks, read_stacks, render_json, render_text

    stacks, errors = read_stacks(args.dumps)
    for error in errors:
        print(f"rankcheck stacks: {error}", file=sys.stderr)
    if not stacks:
        print("rankcheck stacks: no readable stack dump", file=sys.stderr)
        return EXIT_ERROR
    report = group_stacks(stacks)
    sys.stdout.write(render_json(report) if args.json else render_text(report))
    if errors:
        return EXIT_ERROR
    return 1 if report.odd else 0


def main(argv: Optional[List[str]] = None) -> int:  # `python -m rankcheck.runtime.cli run ...`
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"run": run_main, "dump": dump_main, "stacks": stacks_main}
    if not argv or argv[0] not in commands:
        print("usage: rankcheck {run,dump,stacks} ...", file=sys.stderr)
        return EXIT_ERROR
    return commands[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
