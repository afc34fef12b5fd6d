"""Benchmark rankcheck against ruff and fixit on any directory, in one go.

    python bench/bench.py DIR [--runs N] [--json FILE] [--edit-file PATH] [--commit SHA]

Scenarios, each run N times (whole-process wall time, CPU time of the process and its workers,
peak RSS of the largest process from wait4(), and the peak total RSS of the process tree sampled
from /proc):
  cold        `rankcheck --no-cache`
  cold-write  rankcheck with an empty cache directory (what a first run really costs)
  warm        rankcheck with the cache present and nothing changed
  edit        one file touched and a comment appended, warm otherwise
  named       the same edit with only that file named (`rankcheck check FILE`): what the pre-commit
              hook runs for a one-file commit (the analysis is focused on what can change the
              file's findings; the whole project is still read)
  restored    a fresh copy of the tree (every mtime new, another path) checked with the cache of
              the runs above: what CI sees when it restores `.rankcheck_cache` (actions/cache)
  daemon-1st  `rankcheck --daemon` starting the project's daemon (loads the cache, analyses)
  daemon-warm the same again, nothing changed
  daemon-edit the same after one file is touched and a comment appended
  ruff        `ruff check --select ALL --no-cache` (skipped when ruff is missing)
  fixit       `fixit lint` with its default rules (skipped when fixit is missing)
plus `lsp`: the language server's re-diagnosis of a ~1,000-line buffer after an edit, in-process
(`integrations.lsp_documents.analyse_documents`, which calls `check_paths([file], root=DIR, sources={file: text},
use_cache=True, workspace=...)`: only what can change the buffer's findings is analysed, and only
what read the edited code is interpreted again), median and slowest of several edits, each typing a
statement into another function's body: on a line of its own (every line below moves), then within
a line.

The edited file is restored byte for byte (and its mtime) afterwards. Prints a table of medians and
ratios, and writes everything (every run) as JSON with --json.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


# ------------------------------------------------------------------------------------------------
# measuring one process


def _children(pid: int) -> List[int]:
    out: List[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                out.extend(int(x) for x in handle.read().split())
    except OSError:
        pass
    return out


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class _TreeSampler(threading.Thread):
    """Peak of the summed RSS of a process and its descendants, sampled every 50 ms."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_kib = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            total = 0
            stack = [self.pid]
            seen = set()
            while stack:
                pid = stack.pop()
                if pid in seen:
                    continue
                seen.add(pid)
                total += _rss_kib(pid)
                stack.extend(_children(pid))
            self.peak_kib = max(self.peak_kib, total)
            self.done.wait(0.05)


def measure(argv: List[str], cwd: Path, env: Optional[Dict[str, str]] = None) -> Dict[str, float]:
    """Run a command; its wall time, CPU time (with descendants), peak RSS and exit status."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=str(cwd), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sampler = _TreeSampler(proc.pid)
    sampler.start()
    stderr_chunks: List[bytes] = []
    reader = threading.Thread(target=lambda: stderr_chunks.append(proc.stderr.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8
    sampler.done.set()
    sampler.join()
    reader.join(timeout=5)
    stderr = b"".join(stderr_chunks).decode("utf-8", "replace")
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),  # Linux: KiB; largest single process
        "peak_tree_rss_mib": round(sampler.peak_kib / 1024, 1),
        "exit": proc.returncode,
        "stderr_tail": stderr[-400:],
    }


# ------------------------------------------------------------------------------------------------
# the tree


def python_files(root: Path) -> List[Path]:
    sys.path.insert(0, str(REPO))
    from rankcheck.driver.discover import discover

    return [s.path for s in discover([root], root)]


def count_lines(paths: List[Path]) -> int:
    total = 0
    for path in paths:
        try:
            total += path.read_bytes().count(b"\n")
        except OSError:
            pass
    return total


def pick_edit_file(paths: List[Path]) -> Path:
    """A file the analysis parses, of about 1,000 lines (a typical edit, and the LSP buffer)."""
    from rankcheck.catalog import load_catalog
    from rankcheck.driver import prefilter

    seeds = prefilter.seeds_from_catalog(load_catalog())
    texts = {}
    for path in paths:
        try:
            texts[path] = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    ordered = sorted(texts)
    scans = [prefilter.scan_text(texts[p]) for p in ordered]
    selector = prefilter.Selector(seeds, scans, [(p.stem, False) for p in ordered])
    candidates = [p for k, p in enumerate(ordered) if selector.is_seed_candidate(k)] or ordered
    return min(candidates, key=lambda p: (abs(texts[p].count("\n") - 1000), str(p)))


def git_commit(root: Path) -> Optional[str]:
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def find_tool(name: str) -> Optional[str]:
    sibling = Path(sys.executable).parent / name
    if sibling.is_file() and os.access(sibling, os.X_OK):
        return str(sibling)
    return shutil.which(name)


# ------------------------------------------------------------------------------------------------
# the language-server-like measurement (run in a child process: its own memory, a fresh import)


def body_edit(text: str, n: int) -> str:
    """Edit n of a buffer: a statement typed at the top of a function body, the n-th function from
    the middle of the file on (what typing in an editor mostly is: every line below moves)."""
    lines = text.split("\n")
    starts = []
    for i, line in enumerate(lines[:-1]):
        body = lines[i + 1]
        indent = body[: len(body) - len(body.lstrip())]
        if line.lstrip().startswith("def ") and line.rstrip().endswith(":") and len(indent) > len(line) - len(line.lstrip()):
            starts.append((i + 1, indent))
    if not starts:
        return text + f"\n_rankcheck_bench_edit = {n}\n"
    index, indent = starts[(len(starts) // 2 + n) % len(starts)]
    return "\n".join(lines[:index] + [f"{indent}_rankcheck_bench_edit = {n}"] + lines[index:])


def line_edit(text: str, n: int) -> str:
    """Edit n of a buffer: `; _rankcheck_bench_typed = n` typed at the end of the first one-line
    statement of a function body, the n-th such function from the middle of the file on (typing
    within a line: no line moves)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text + f"\n_rankcheck_bench_typed = {n}\n"
    simple = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)
    targets = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = next((st for st in node.body if isinstance(st, simple) and st.lineno == st.end_lineno), None)
            if first is not None:
                targets.append((first.lineno, first.end_col_offset))
    if not targets:
        return text + f"\n_rankcheck_bench_typed = {n}\n"
    targets.sort()
    line_no, end = targets[(len(targets) // 2 + n) % len(targets)]
    lines = text.split("\n")
    line = lines[line_no - 1].encode("utf-8")  # ast's columns are byte offsets
    lines[line_no - 1] = (line[:end] + f"; _rankcheck_bench_typed = {n}".encode() + line[end:]).decode("utf-8")
    return "\n".join(lines)


def lsp_child(root: Path, file: Path, cache_dir: Path, edits: int) -> Dict[str, object]:
    """What the server does after an edit (`integrations.lsp_documents.analyse_documents`, the function its
    worker thread runs): the open buffer, edited, analysed against the workspace with the summary
    cache and the server's memory of the previous analysis; only the buffer is reported on, so
    only what can change its findings is analysed. The edits type a statement into a function
    body on a line of its own (`body_edit`), each into another function, then within a line
    (`line_edit`), from the saved text again."""
    sys.path.insert(0, str(REPO))
    os.environ["RANKCHECK_CACHE_DIR"] = str(cache_dir)
    from rankcheck.integrations.lsp_documents import OpenDocument, PublishedState, analyse_documents

    text = file.read_text(encoding="utf-8")
    path = str(file.resolve())
    state = PublishedState()

    def diagnose(buffer: str) -> int:
        document = OpenDocument(uri=file.resolve().as_uri(), path=path, text=buffer)
        outcome = analyse_documents([document], [str(root)], state)
        if outcome.failed:
            raise RuntimeError("\n".join(outcome.log))
        return len(outcome.diagnostics.get(document.uri, []))

    started = time.perf_counter()
    diagnose(text)
    first = time.perf_counter() - started
    found = 0

    def timed(edit: Callable[[str, int], str]) -> List[float]:
        nonlocal found
        times = []
        for n in range(edits):
            buffer = edit(text, n)
            started = time.perf_counter()
            found = diagnose(buffer)
            times.append(time.perf_counter() - started)
        return times

    times = timed(body_edit)
    diagnose(text)
    inline = timed(line_edit)
    return {
        "file": str(file),
        "lines": text.count("\n"),
        "first_s": round(first, 3),
        "edits_s": [round(t, 4) for t in times],
        "median_s": round(statistics.median(times), 4),
        "max_s": round(max(times), 4),
        "inline_edits_s": [round(t, 4) for t in inline],
        "inline_median_s": round(statistics.median(inline), 4),
        "inline_max_s": round(max(inline), 4),
        "findings": found,
    }


# ------------------------------------------------------------------------------------------------
# the run


def bench(root: Path, runs: int, edit_file: Optional[Path], lsp_edits: int, skip: List[str], fixit_runs: Optional[int] = None) -> Dict[str, object]:
    root = root.resolve()
    files = python_files(root)
    edit = (edit_file.resolve() if edit_file else pick_edit_file(files))
    env = dict(os.environ)
    env.pop("RANKCHECK_CACHE_DIR", None)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    rankcheck = [sys.executable, "-m", "rankcheck", "check", ".", "--format", "concise", "--exit-zero"]
    results: Dict[str, List[Dict[str, float]]] = {}
    work = Path(tempfile.mkdtemp(prefix="rankcheck-bench-"))
    original = edit.read_bytes()
    original_stat = edit.stat()

    def record(name: str, argv: List[str], env_: Optional[Dict[str, str]] = None, cwd: Optional[Path] = None) -> None:
        result = measure(argv, cwd or root, env_ or env)
        results.setdefault(name, []).append(result)
        print(f"  {name:<11} wall {result['wall_s']:7.2f}s  cpu {result['cpu_s']:7.2f}s  rss {result['peak_rss_mib']:7.1f} MiB  "
              f"tree {result['peak_tree_rss_mib']:7.1f} MiB  exit {result['exit']}", file=sys.stderr, flush=True)

    def append_comment(label: str) -> None:
        # touch + append: a new mtime and a new content, whose summary no cache holds yet
        with open(edit, "ab") as handle:
            handle.write(f"\n# rankcheck bench {label} {time.time()}\n".encode())

    def restore_edit() -> None:
        edit.write_bytes(original)
        os.utime(edit, ns=(original_stat.st_atime_ns, original_stat.st_mtime_ns))

    try:
        for run in range(runs):
            print(f"run {run + 1}/{runs}", file=sys.stderr, flush=True)
            if "cold" not in skip:
                record("cold", rankcheck + ["--no-cache"])
            cache = work / f"cache-{run}"
            record("cold-write", rankcheck + ["--cache-dir", str(cache)])
            record("warm", rankcheck + ["--cache-dir", str(cache)])
            append_comment(f"edit {run}")
            record("edit", rankcheck + ["--cache-dir", str(cache)])
            restore_edit()
            append_comment(f"named edit {run}")
            named = [str(edit.relative_to(root)) if part == "." else part for part in rankcheck]
            record("named", named + ["--cache-dir", str(cache)])
            restore_edit()
            if "restored" not in skip:
                # A CI checkout: the same files at another path, all with new mtimes (no stat
                # matches, every file is read and hashed), and a cache restored from an earlier run.
                checkout = work / f"checkout-{run}"
                shutil.copytree(root, checkout, symlinks=True, copy_function=shutil.copy,
                                ignore=shutil.ignore_patterns(".git", ".rankcheck_cache", "__pycache__"))
                try:
                    record("restored", rankcheck + ["--cache-dir", str(cache)], cwd=checkout)
                finally:
                    shutil.rmtree(checkout, ignore_errors=True)
            if "daemon" not in skip:
                daemon = rankcheck + ["--daemon", "--cache-dir", str(cache)]
                record("daemon-1st", daemon)  # starts the daemon: loads the cache, analyses
                record("daemon-warm", daemon)
                append_comment(f"daemon edit {run}")
                record("daemon-edit", daemon)
                restore_edit()
                subprocess.run([sys.executable, "-m", "rankcheck", "daemon", "stop"], cwd=root, env=env, capture_output=True)
            ruff = find_tool("ruff")
            if ruff and "ruff" not in skip:
                record("ruff", [ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "--quiet", "."])
            fixit = find_tool("fixit")
            if fixit and "fixit" not in skip and run < (runs if fixit_runs is None else fixit_runs):
                record("fixit", [fixit, "lint", "."])
        lsp: Optional[Dict[str, object]] = None
        if "lsp" not in skip:
            cache = work / "cache-lsp"
            out = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--lsp-child", str(root), str(edit), str(cache), str(lsp_edits)],
                capture_output=True, text=True, env=env,
            )
            if out.returncode == 0:
                lsp = json.loads(out.stdout.strip().splitlines()[-1])
            else:
                lsp = {"error": out.stderr[-2000:]}
    finally:
        if edit.read_bytes() != original:
            restore_edit()
        shutil.rmtree(work, ignore_errors=True)

    medians = {name: {k: statistics.median(r[k] for r in rs) for k in ("wall_s", "cpu_s", "peak_rss_mib", "peak_tree_rss_mib")} for name, rs in results.items()}
    ratios: Dict[str, float] = {}
    if "ruff" in medians:
        for name in ("cold", "cold-write", "warm", "edit", "named", "restored", "daemon-warm", "daemon-edit"):
            if name in medians:
                ratios[f"{name}/ruff"] = round(medians[name]["wall_s"] / medians["ruff"]["wall_s"], 2)
    if "fixit" in medians:
        for name in ("cold", "cold-write"):
            if name in medians:
                ratios[f"{name}/fixit"] = round(medians[name]["wall_s"] / medians["fixit"]["wall_s"], 2)
    return {
        "directory": str(root),
        "commit": git_commit(root),
        "files": len(files),
        "lines": count_lines(files),
        "edit_file": str(edit.relative_to(root)),
        "runs": runs,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_before": os.getloadavg()},
        "medians": medians,
        "ratios": ratios,
        "lsp": lsp,
        "raw": results,
    }


def table(report: Dict[str, object]) -> str:
    lines = [
        f"{report['directory']} ({report.get('commit') or 'no commit'}): {report['files']} files, {report['lines']} lines, "
        f"median of {report['runs']}",
        f"{'scenario':<12}{'wall s':>9}{'cpu s':>9}{'peak RSS MiB':>14}{'tree RSS MiB':>14}",
    ]
    for name, m in report["medians"].items():  # type: ignore[union-attr]
        lines.append(f"{name:<12}{m['wall_s']:>9.2f}{m['cpu_s']:>9.2f}{m['peak_rss_mib']:>14.1f}{m['peak_tree_rss_mib']:>14.1f}")
    for name, value in report["ratios"].items():  # type: ignore[union-attr]
        lines.append(f"ratio {name:<18}{value:>6.2f}")
    lsp = report.get("lsp")
    if isinstance(lsp, dict) and "median_s" in lsp:
        lines.append(f"lsp re-diagnosis of {lsp['file']} ({lsp['lines']} lines), first (cold, in-process) {lsp['first_s']:.2f} s;")
        lines.append(f"  a statement typed on a new line: median {lsp['median_s'] * 1000:.0f} ms, slowest {lsp['max_s'] * 1000:.0f} ms")
        lines.append(f"  typed within a line: median {lsp['inline_median_s'] * 1000:.0f} ms, slowest {lsp['inline_max_s'] * 1000:.0f} ms")
    elif isinstance(lsp, dict):
        lines.append(f"lsp: failed: {lsp.get('error', '')[-300:]}")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--lsp-child":
        root, file, cache, edits = argv[1:5]
        print(json.dumps(lsp_child(Path(root), Path(file), Path(cache), int(edits))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the full report (every run) here")
    parser.add_argument("--edit-file", type=Path, help="the file to edit (default: a parsed file of ~1,000 lines)")
    parser.add_argument("--lsp-edits", type=int, default=7)
    parser.add_argument("--fixit-runs", type=int, help="fewer fixit runs than --runs (it is slow on big trees)")
    parser.add_argument("--commit", help="the commit of DIR when it is not a git checkout")
    parser.add_argument("--skip", action="append", default=[], choices=["cold", "ruff", "fixit", "lsp", "daemon", "restored"])
    args = parser.parse_args(argv)
    report = bench(args.directory, args.runs, args.edit_file, args.lsp_edits, args.skip, args.fixit_runs)
    if args.commit:
        report["commit"] = args.commit
    print(table(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
