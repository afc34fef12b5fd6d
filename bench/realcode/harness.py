"""Real-code precision harness: how many of rankcheck's findings on public training code are real.

    python bench/realcode/harness.py [--repo NAME ...] [--rankcheck "CMD"] [--json]
                                     [--mirror DIR] [--clone] [--trees DIR]
                                     [--save FILE] [--load FILE] [--compare OLD.json]
                                     [--sample N [--seed S]]

What it does, for every repository of `manifest.toml` (or only those named with `--repo`):

1. finds the repository's git directory: under `--mirror DIR` (default `/work/.mirror`) a
   directory named `owner+name` that is, or holds (`repo/`, `.git/`, `*.git`), a git directory
   with the pinned commit; failing that, with `--clone`, a bare `git clone` of the url into
   `<trees>/clones/owner+name.git` (and a `git fetch` of the commit if the clone lacks it);
2. extracts the pinned commit into `--trees DIR` (default `~/.cache/rankcheck-realcode`) as
   `<name>-<commit12>/`, with `git archive | tar -x`, once (later runs reuse it);
3. runs rankcheck there as a new user would: `<rankcheck> check --no-cache --format json <tree>`
   (or `<tree>/<subdir>`), with the tree as the working directory, where `<rankcheck>` is
   `--rankcheck "CMD"` (default: this Python's `-m rankcheck`), and times it;
4. matches each finding to `labels/<name>.toml` by its fingerprint (path relative to the
   repository root, line, code) and warns when a label's `text` no longer equals the stripped
   source line (the label has drifted), names an unknown label or class, or is given twice.

`--load FILE` takes the findings from a run saved with `--save` instead of running rankcheck (to
re-read labels without analysing again); `--compare OLD.json` prints a before/after table against a
saved run and every finding added or removed, with its label. `--sample N` prints N findings per
repository drawn with `random.Random(--seed)` from its sorted non-test findings (how a subset to
label is chosen reproducibly).

The numbers:
  py lines      non-blank lines of the `.py` files under what was checked (no hidden directories),
                split into non-test and test code; test code is any path with a directory named
                `tests`, `test` or `testing`, or a file named `test_*.py`, `*_test.py` or
                `conftest.py`
  findings      what rankcheck reported, non-test / test by the same rule
  TP            labelled real: hangs in the repository's common configuration
  TP-latent     labelled real under a plausible configuration (the label's `why` says which)
  FP            labelled a false alarm: cannot hang (the label's `class` says why, see README)
  unlabelled    findings no label matches (listed one by one: they need labelling)
  precision     (TP + TP-latent) / labelled findings, over all findings and over non-test ones
  /10k          non-test findings per 10,000 non-test lines
  seconds       wall time of the rankcheck process
  gone          labels whose finding is no longer reported: a real hazard gone is a recall loss,
                a false alarm gone is a gain; they are listed separately

Each finding counts once; two findings with one fingerprint (same line and code, another column)
share the label. Exit status: 0, also when there are findings or unlabelled ones; 2 when the harness
cannot measure (no git directory, a failed extraction, rankcheck exiting other than 0/1 or printing
no JSON), after everything else has been printed.

Needs only the standard library (and `tomli` on Python < 3.11) and git and tar on PATH.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path, PurePosixPath
from typing import Any, Dict, List, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    try:
        import tomli as tomllib
    except ImportError:  # the one dependency, on Python < 3.11
        sys.exit("harness.py needs tomli on Python < 3.11: pip install tomli")

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.toml"
LABELS = HERE / "labels"
DEFAULT_MIRROR = Path("/work/.mirror")
DEFAULT_TREES = Path.home() / ".cache" / "rankcheck-realcode"
SAVE_VERSION = 1

REAL = ("TP", "TP-latent")
LABEL_VALUES = ("TP", "TP-latent", "FP")
FP_CLASSES = (
    "guard-uniform-over-group",
    "dies-loudly",
    "taint-through-object",
    "uniform-value",
    "shape-fixed",
    "test-assertion",
    "assert-invariant",
    "uniform-exception",
    "lone-collective-try",
    "not-a-process-rank",
    "pytest-skip",
    "shape-agreed",
    "complementary-arms",
    "unreachable-for-args",
    "agreement-lost",
    "lockstep-loop",
    "not-a-collective",
    "other",
)
TP_CLASSES = (
    "rank-branch-collective",
    "rank-exit",
    "uneven-loop",
    "rank-dependent-argument",
    "exception-path",
    "mismatched-sequences",
    "rank-zero-only",
)
TEST_DIRS = {"tests", "test", "testing"}

Fingerprint = Tuple[str, int, str]


class HarnessError(Exception):
    """The harness cannot measure a repository (reported, then exit 2)."""


# ------------------------------------------------------------------------------------------------
# manifest, labels


def load_manifest(path: Path = MANIFEST) -> List[Dict[str, Any]]:
    with open(path, "rb") as handle:
        data = tomllib.load(handle)
    repos = data.get("repo", [])
    for repo in repos:
        for key in ("name", "url", "commit", "why"):
            if not isinstance(repo.get(key), str) or not repo[key]:
                raise HarnessError(f"{path}: a [[repo]] lacks `{key}`: {repo}")
        if len(repo["commit"]) != 40:
            raise HarnessError(f"{path}: {repo['name']}: commit must be 40 hex digits")
        repo.setdefault("subdir", "")
    return repos


def owner_name(url: str) -> str:
    """https://github.com/owner/name(.git) -> owner+name (the mirror's directory name)."""
    url = url.rstrip("/")
    url = url[: -len(".git")] if url.endswith(".git") else url
    owner, name = url.split("/")[-2:]
    return f"{owner}+{name}"


def load_labels(name: str, warnings: List[str]) -> Dict[Fingerprint, Dict[str, Any]]:
    path = LABELS / f"{name}.toml"
    if not path.exists():
        return {}
    with open(path, "rb") as handle:
        entries = tomllib.load(handle).get("finding", [])
    labels: Dict[Fingerprint, Dict[str, Any]] = {}
    for entry in entries:
        try:
            key = (str(entry["path"]), int(entry["line"]), str(entry["code"]))
        except (KeyError, TypeError, ValueError):
            warnings.append(f"{name}: a label lacks path/line/code: {entry}")
            continue
        where = f"{name}: {key[0]}:{key[1]} {key[2]}"
        if key in labels:
            warnings.append(f"{where}: labelled twice (the later label wins)")
        label, cls = entry.get("label"), entry.get("class")
        if label not in LABEL_VALUES:
            warnings.append(f"{where}: label {label!r} is not one of {', '.join(LABEL_VALUES)}")
        allowed = FP_CLASSES if label == "FP" else TP_CLASSES
        if cls not in allowed:
            warnings.append(f"{where}: class {cls!r} is not a {'FP' if label == 'FP' else 'TP'} class")
        if not entry.get("why"):
            warnings.append(f"{where}: no `why`")
        labels[key] = entry
    return labels


# ------------------------------------------------------------------------------------------------
# git directories and trees


def _git(git_dir: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], **kwargs)


def _has_commit(git_dir: Path, commit: str) -> bool:
    probe = _git(git_dir, "cat-file", "-e", f"{commit}^{{commit}}", capture_output=True)
    return probe.returncode == 0


def find_git_dir(repo: Dict[str, Any], mirror: Path, trees: Path, clone: bool) -> Path:
    base = owner_name(repo["url"])
    candidates = [mirror / base, mirror / base / "repo", mirror / base / ".git"]
    candidates += sorted((mirror / base).glob("*.git")) if (mirror / base).is_dir() else []
    clone_dir = trees / "clones" / f"{base}.git"
    candidates.append(clone_dir)
    for candidate in candidates:
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            if _has_commit(candidate, repo["commit"]):
                return candidate
    if not clone:
        raise HarnessError(
            f"{repo['name']}: no git directory with commit {repo['commit'][:12]} under "
            f"{mirror / base} (pass --clone to clone {repo['url']})"
        )
    if not (clone_dir / "HEAD").is_file():
        clone_dir.parent.mkdir(parents=True, exist_ok=True)
        run = subprocess.run(["git", "clone", "--bare", "--quiet", repo["url"], str(clone_dir)])
        if run.returncode != 0:
            raise HarnessError(f"{repo['name']}: git clone {repo['url']} failed")
    if not _has_commit(clone_dir, repo["commit"]):
        _git(clone_dir, "fetch", "--quiet", "origin", repo["commit"])
    if not _has_commit(clone_dir, repo["commit"]):
        raise HarnessError(f"{repo['name']}: {repo['url']} has no commit {repo['commit']}")
    return clone_dir


def tree_path(repo: Dict[str, Any], trees: Path) -> Path:
    return trees / f"{repo['name']}-{repo['commit'][:12]}"


def absent_blobs(git_dir: Path, commit: str) -> List[str]:
    """Paths of the commit whose content the git directory lacks (a snapshot leaves out large
    files and Git LFS content); `git archive` is told to leave them out."""
    listing = _git(git_dir, "ls-tree", "-r", "-z", commit, capture_output=True, check=True).stdout
    blobs = []
    for entry in listing.split(b"\0"):
        if entry:
            meta, _, path = entry.partition(b"\t")
            _mode, kind, sha = meta.split()
            if kind == b"blob":
                blobs.append((sha.decode(), path.decode("utf-8", "surrogateescape")))
    check = _git(git_dir, "cat-file", "--batch-check", capture_output=True, check=True,
                 input="".join(f"{sha}\n" for sha, _ in blobs).encode()).stdout.decode().splitlines()
    return [path for (_, path), line in zip(blobs, check) if line.endswith(" missing")]


def extract_tree(repo: Dict[str, Any], git_dir: Path, trees: Path, warnings: List[str]) -> Path:
    """The pinned commit's files, extracted once (into a temporary directory, then renamed)."""
    tree = tree_path(repo, trees)
    absent = absent_blobs(git_dir, repo["commit"])
    if absent:
        warnings.append(f"{repo['name']}: {len(absent)} file(s) absent from {git_dir}, not "
                        f"extracted: {', '.join(absent[:5])}{' ...' if len(absent) > 5 else ''}")
    if tree.is_dir():
        return tree
    trees.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{tree.name}.", dir=trees))
    try:
        # git still complains about an excluded missing blob on stderr, but leaves it out
        excludes = [f":(exclude,literal){path}" for path in absent]
        archive = subprocess.Popen(
            ["git", f"--git-dir={git_dir}", "archive", "--format=tar", repo["commit"], "--",
             *(["."] + excludes if excludes else [])],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        untar = subprocess.run(["tar", "-x", "-f", "-", "-C", str(partial)], stdin=archive.stdout)
        archive.stdout.close()  # type: ignore[union-attr]
        err = archive.stderr.read().decode(errors="replace")  # type: ignore[union-attr]
        if archive.wait() != 0 or untar.returncode != 0:
            raise HarnessError(f"{repo['name']}: git archive | tar -x failed: {err[-2000:]}")
        partial.rename(tree)
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
    return tree


# ------------------------------------------------------------------------------------------------
# counting code


def is_test_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    if any(part in TEST_DIRS for part in parts[:-1]):
        return True
    return (name.startswith("test_") and name.endswith(".py")) or name.endswith("_test.py") or (
        name == "conftest.py"
    )


def count_lines(tree: Path, subdir: str) -> Tuple[int, int]:
    """Non-blank lines of .py files under tree/subdir: (non-test, test)."""
    top = tree / subdir if subdir else tree
    code = tests = 0
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for filename in filenames:
            if not filename.endswith(".py"):
                continue
            full = Path(dirpath) / filename
            try:
                with open(full, "rb") as handle:
                    n = sum(1 for line in handle if line.strip())
            except OSError:
                continue
            if is_test_path(full.relative_to(tree).as_posix()):
                tests += n
            else:
                code += n
    return code, tests


# ------------------------------------------------------------------------------------------------
# running rankcheck


def _relativize(value: Any, tree: str) -> Any:
    """Every `path` inside a finding made relative to the repository root."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "path" and isinstance(item, str):
                if os.path.isabs(item) and (item == tree or item.startswith(tree + os.sep)):
                    item = os.path.relpath(item, tree)
                item = item.replace(os.sep, "/")
            out[key] = _relativize(item, tree)
        return out
    if isinstance(value, list):
        return [_relativize(item, tree) for item in value]
    return value


def run_rankcheck(repo: Dict[str, Any], tree: Path, command: List[str]) -> Dict[str, Any]:
    target = tree / repo["subdir"] if repo["subdir"] else tree
    argv = [*command, "check", "--no-cache", "--format", "json", str(target)]
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=tree, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise HarnessError(
            f"{repo['name']}: {shlex.join(argv)} exited {proc.returncode}:\n{proc.stderr[-2000:]}"
        )
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise HarnessError(f"{repo['name']}: rankcheck printed no JSON ({exc})") from exc
    findings = [_relativize(f, str(tree)) for f in doc.get("findings", [])]
    findings.sort(key=lambda f: (f["location"]["path"], f["location"]["line"],
                                 f["location"]["column"], f["code"]))
    return {
        "commit": repo["commit"],
        "subdir": repo["subdir"],
        "exit_code": proc.returncode,
        "seconds": round(seconds, 2),
        "files_checked": doc.get("files_checked"),
        "tool_version": doc.get("tool_version"),
        "findings": findings,
    }


# ------------------------------------------------------------------------------------------------
# matching and counting


def fingerprint(finding: Dict[str, Any]) -> Fingerprint:
    loc = finding["location"]
    return (loc["path"], int(loc["line"]), finding["code"])


def _source_line(tree: Optional[Path], path: str, line: int, cache: Dict[str, List[str]]) -> Optional[str]:
    if tree is None:
        return None
    if path not in cache:
        try:
            cache[path] = (tree / path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            cache[path] = []
    lines = cache[path]
    return lines[line - 1].strip() if 0 < line <= len(lines) else None


def new_counts() -> Dict[str, Any]:
    return {"findings": 0, "nontest": 0, "test": 0, "TP": 0, "TP-latent": 0, "FP": 0,
            "unlabelled": 0, "nt_real": 0, "nt_labelled": 0}


def add(counts: Dict[str, Any], finding: Dict[str, Any], label: Optional[Dict[str, Any]]) -> None:
    test = is_test_path(finding["location"]["path"])
    counts["findings"] += 1
    counts["test" if test else "nontest"] += 1
    if label is None or label.get("label") not in LABEL_VALUES:
        counts["unlabelled"] += 1
        return
    counts[label["label"]] += 1
    if not test:
        counts["nt_labelled"] += 1
        counts["nt_real"] += label["label"] in REAL


def precision(counts: Dict[str, Any]) -> Tuple[Optional[float], Optional[float]]:
    labelled = counts["TP"] + counts["TP-latent"] + counts["FP"]
    everything = (counts["TP"] + counts["TP-latent"]) / labelled if labelled else None
    nontest = counts["nt_real"] / counts["nt_labelled"] if counts["nt_labelled"] else None
    return everything, nontest


def is_tool_diagnostic(finding: Dict[str, Any]) -> bool:
    """RC0xx (a file rankcheck could not read, an import it left unresolved) says something about
    rankcheck's reading of the tree, not that the code can hang: counted apart, not in precision."""
    return str(finding["code"]).startswith("RC0")


def hazard_findings(run: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [f for f in run["findings"] if not is_tool_diagnostic(f)]


def evaluate(repo: Dict[str, Any], run: Dict[str, Any], tree: Optional[Path],
             warnings: List[str]) -> Dict[str, Any]:
    """Findings matched to labels: the counts, the unlabelled, the gone, per code and class."""
    name = repo["name"]
    labels = load_labels(name, warnings)
    lines: Dict[str, List[str]] = {}
    for key, entry in labels.items():
        text = entry.get("text")
        actual = _source_line(tree, key[0], key[1], lines)
        if tree is not None and actual is None:
            warnings.append(f"{name}: {key[0]}:{key[1]} {key[2]}: the labelled line is not in the tree")
        elif actual is not None and text is not None and actual != str(text).strip():
            warnings.append(
                f"{name}: {key[0]}:{key[1]} {key[2]}: label text drifted: {text!r} != {actual!r}"
            )
    counts = new_counts()
    per_code: Dict[str, Dict[str, Any]] = defaultdict(new_counts)
    classes: Counter = Counter()
    unlabelled, matched = [], set()
    tool = Counter(f["code"] for f in run["findings"] if is_tool_diagnostic(f))
    for finding in hazard_findings(run):
        key = fingerprint(finding)
        label = labels.get(key)
        add(counts, finding, label)
        add(per_code[finding["code"]], finding, label)
        if label is None or label.get("label") not in LABEL_VALUES:
            unlabelled.append(finding)
        else:
            matched.add(key)
            classes[(label["label"], label.get("class", "?"))] += 1
    gone = [dict(entry, path=k[0], line=k[1], code=k[2])
            for k, entry in sorted(labels.items()) if k not in matched]
    return {
        "name": name,
        "commit": repo["commit"],
        "counts": counts,
        "per_code": dict(per_code),
        "classes": classes,
        "unlabelled": unlabelled,
        "tool": tool,
        "gone_real": [g for g in gone if g.get("label") in REAL],
        "gone_fp": [g for g in gone if g.get("label") == "FP"],
        "labels": labels,
    }


# ------------------------------------------------------------------------------------------------
# printing


def _pct(value: Optional[float]) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _table(header: List[str], rows: List[List[Any]]) -> str:
    cells = [header] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    out = []
    for n, row in enumerate(cells):
        out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(row, widths))))
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def _count_cells(counts: Dict[str, Any]) -> List[Any]:
    """findings, non-test, test, TP, TP-latent, FP, unlabelled, precision, non-test precision."""
    p_all, p_nt = precision(counts)
    return [counts["findings"], counts["nontest"], counts["test"], counts["TP"],
            counts["TP-latent"], counts["FP"], counts["unlabelled"], _pct(p_all), _pct(p_nt)]


COUNT_HEADER = ["findings", "non-test", "test", "TP", "TP-lat", "FP", "unlab", "prec", "prec-nt"]


def _finding_line(finding: Dict[str, Any], label: Optional[Dict[str, Any]] = None) -> str:
    loc = finding["location"]
    text = f"{loc['path']}:{loc['line']}:{loc['column']}: {finding['code']} {finding['message']}"
    if label is not None:
        text += f"\n      [{label.get('label')} {label.get('class')}] {label.get('why', '')}"
    return text


def summarize(results: List[Dict[str, Any]], runs: Dict[str, Dict[str, Any]],
              loc: Dict[str, Tuple[int, int]]) -> Dict[str, Any]:
    total = new_counts()
    per_code: Dict[str, Dict[str, Any]] = defaultdict(new_counts)
    classes: Counter = Counter()
    for result in results:
        for key in total:
            total[key] += result["counts"][key]
        for code, counts in result["per_code"].items():
            for key in counts:
                per_code[code][key] += counts[key]
        classes.update(result["classes"])
    repos = []
    for result in results:
        run = runs[result["name"]]
        code_lines, test_lines = loc.get(result["name"], (0, 0))
        p_all, p_nt = precision(result["counts"])
        repos.append({
            "name": result["name"], "commit": result["commit"],
            "lines_nontest": code_lines, "lines_test": test_lines,
            "files_checked": run.get("files_checked"),
            **{k: v for k, v in result["counts"].items() if not k.startswith("nt_")},
            "precision": p_all, "precision_nontest": p_nt,
            "per_10k": (10000 * result["counts"]["nontest"] / code_lines) if code_lines else None,
            "seconds": run.get("seconds"),
        })
    return {"repos": repos, "total": total, "per_code": dict(sorted(per_code.items())),
            "classes": classes}


def print_text(results: List[Dict[str, Any]], summary: Dict[str, Any], warnings: List[str],
               sample: Dict[str, List[Dict[str, Any]]]) -> None:
    rows = []
    for repo, result in zip(summary["repos"], results):
        rows.append([repo["name"], repo["lines_nontest"], repo["lines_test"],
                     *_count_cells(result["counts"]),
                     "-" if repo["per_10k"] is None else f"{repo['per_10k']:.1f}",
                     "-" if repo["seconds"] is None else f"{repo['seconds']:.1f}"])
    lines_total = sum(r["lines_nontest"] for r in summary["repos"])
    rows.append(["TOTAL", lines_total, sum(r["lines_test"] for r in summary["repos"]),
                 *_count_cells(summary["total"]),
                 f"{10000 * summary['total']['nontest'] / lines_total:.1f}" if lines_total else "-",
                 f"{sum(r['seconds'] or 0 for r in summary['repos']):.1f}"])
    print("Per repository")
    print(_table(["repo", "py-lines", "test-lines", *COUNT_HEADER, "/10k", "secs"], rows))
    print("\nPer code (all repositories)")
    print(_table(["code", *COUNT_HEADER],
                 [[code, *_count_cells(c)] for code, c in summary["per_code"].items()]))
    tool_rows = [f"{r['name']} " + ", ".join(f"{c} {n}" for c, n in sorted(r["tool"].items())) for r in results if r["tool"]]
    if tool_rows:
        print("\nTool diagnostics (RC0xx: rankcheck's reading of the tree, not hazards; not in the tables)")
        print("  " + "; ".join(tool_rows))
    print("\nLabel classes")
    for label in ("FP", "TP", "TP-latent"):
        items = sorted(((n, cls) for (lab, cls), n in summary["classes"].items() if lab == label),
                       reverse=True)
        if items:
            print(f"  {label}: " + ", ".join(f"{cls} {n}" for n, cls in items))
    for result in results:
        if result["unlabelled"]:
            print(f"\nUnlabelled: {result['name']} ({len(result['unlabelled'])})")
            for finding in result["unlabelled"]:
                print("  " + _finding_line(finding))
    for result in results:
        for kind, title in (("gone_real", "real hazards no longer reported (recall loss)"),
                            ("gone_fp", "false alarms no longer reported (gain)")):
            if result[kind]:
                print(f"\nGone: {result['name']}: {title} ({len(result[kind])})")
                for g in result[kind]:
                    print(f"  {g['path']}:{g['line']}: {g['code']} [{g.get('label')} "
                          f"{g.get('class')}] {g.get('why', '')}")
    for name, picked in sample.items():
        print(f"\nSample: {name} ({len(picked)})")
        labels = next(r["labels"] for r in results if r["name"] == name)
        for finding in picked:
            print("  " + _finding_line(finding, labels.get(fingerprint(finding))))
    if warnings:
        print(f"\nWarnings ({len(warnings)})")
        for warning in warnings:
            print("  " + warning)


def compare(old: Dict[str, Any], runs: Dict[str, Dict[str, Any]], results: List[Dict[str, Any]],
            as_json: bool) -> Dict[str, Any]:
    """What changed against a saved run: a before/after table, and the findings added/removed."""
    report: Dict[str, Any] = {"against": old.get("rankcheck"), "repos": []}
    for result in results:
        name = result["name"]
        before_run = old.get("repos", {}).get(name)
        if before_run is None:
            report["repos"].append({"name": name, "missing": True})
            continue
        if before_run.get("commit") != result["commit"]:
            report["repos"].append({"name": name, "commit_changed": before_run.get("commit")})
            continue
        labels = result["labels"]
        before_findings, after_findings = hazard_findings(before_run), hazard_findings(runs[name])
        before = Counter(fingerprint(f) for f in before_findings)
        after = Counter(fingerprint(f) for f in after_findings)
        by_key = {fingerprint(f): f for f in before_findings}
        by_key.update({fingerprint(f): f for f in after_findings})
        old_counts, new_counts_ = new_counts(), new_counts()
        for f in before_findings:
            add(old_counts, f, labels.get(fingerprint(f)))
        for f in after_findings:
            add(new_counts_, f, labels.get(fingerprint(f)))
        added = sorted((after - before).elements())
        removed = sorted((before - after).elements())
        report["repos"].append({
            "name": name, "before": old_counts, "after": new_counts_,
            "seconds": [before_run.get("seconds"), runs[name].get("seconds")],
            "added": [{"finding": by_key[k], "label": labels.get(k)} for k in added],
            "removed": [{"finding": by_key[k], "label": labels.get(k)} for k in removed],
        })
    report["total"] = {"before": new_counts(), "after": new_counts()}
    per_code: Dict[str, Dict[str, Dict[str, Any]]] = defaultdict(
        lambda: {"before": new_counts(), "after": new_counts()})
    for repo in report["repos"]:
        for side in ("before", "after"):
            if side in repo:
                for key in report["total"][side]:
                    report["total"][side][key] += repo[side][key]
        labels = next(r["labels"] for r in results if r["name"] == repo["name"])
        if "before" in repo:
            for f in hazard_findings(old["repos"][repo["name"]]):
                add(per_code[f["code"]]["before"], f, labels.get(fingerprint(f)))
            for f in hazard_findings(runs[repo["name"]]):
                add(per_code[f["code"]]["after"], f, labels.get(fingerprint(f)))
    report["per_code"] = dict(sorted(per_code.items()))
    if as_json:
        return report

    def arrow(b: Dict[str, Any], a: Dict[str, Any]) -> List[str]:
        return [f"{b['findings']} -> {a['findings']}", f"{b['TP']} -> {a['TP']}",
                f"{b['TP-latent']} -> {a['TP-latent']}", f"{b['FP']} -> {a['FP']}",
                f"{b['unlabelled']} -> {a['unlabelled']}",
                f"{_pct(precision(b)[0])} -> {_pct(precision(a)[0])}"]

    print(f"\nCompared with {old.get('rankcheck')!r} (saved run)")
    rows = []
    for repo in report["repos"]:
        if repo.get("missing"):
            rows.append([repo["name"], "not in the saved run", "", "", "", "", "", ""])
            continue
        if repo.get("commit_changed"):
            rows.append([repo["name"], f"saved at another commit ({repo['commit_changed'][:12]})",
                         "", "", "", "", "", ""])
            continue
        rows.append([repo["name"], *arrow(repo["before"], repo["after"]),
                     f"{repo['seconds'][0]} -> {repo['seconds'][1]}"])
    rows.append(["TOTAL", *arrow(report["total"]["before"], report["total"]["after"]), ""])
    print(_table(["repo", "findings", "TP", "TP-lat", "FP", "unlab", "prec", "secs"], rows))
    print()
    print(_table(["code", "findings", "TP", "TP-lat", "FP", "unlab", "prec"],
                 [[code, *arrow(c["before"], c["after"])] for code, c in report["per_code"].items()]))
    for repo in report["repos"]:
        for kind in ("added", "removed"):
            for item in repo.get(kind, []):
                print(f"  {kind:7} {repo['name']}: " + _finding_line(item["finding"], item["label"]))
    return report


# ------------------------------------------------------------------------------------------------
# main


def _jsonable(result: Dict[str, Any]) -> Dict[str, Any]:
    return {
        "name": result["name"],
        "unlabelled": [{"path": f["location"]["path"], "line": f["location"]["line"],
                        "column": f["location"]["column"], "code": f["code"],
                        "message": f["message"]} for f in result["unlabelled"]],
        "gone_real": result["gone_real"],
        "gone_fp": result["gone_fp"],
    }


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", nargs="+", metavar="NAME", help="only these repositories")
    parser.add_argument("--rankcheck", metavar="CMD", default=None,
                        help="the rankcheck command (default: this Python's -m rankcheck)")
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR,
                        help=f"where owner+name git directories are found (default {DEFAULT_MIRROR})")
    parser.add_argument("--clone", action="store_true", help="git clone what the mirror lacks")
    parser.add_argument("--trees", type=Path, default=DEFAULT_TREES,
                        help=f"where the pinned trees are extracted (default {DEFAULT_TREES})")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--save", type=Path, metavar="FILE", help="write this run's findings")
    parser.add_argument("--load", type=Path, metavar="FILE",
                        help="take the findings from a saved run instead of running rankcheck")
    parser.add_argument("--compare", type=Path, metavar="OLD.json", help="compare with a saved run")
    parser.add_argument("--sample", type=int, metavar="N", help="print N random non-test findings per repository")
    parser.add_argument("--seed", type=int, default=0, help="the seed of --sample (default 0)")
    args = parser.parse_args(argv)

    command = shlex.split(args.rankcheck) if args.rankcheck else [sys.executable, "-m", "rankcheck"]
    repos = load_manifest()
    if args.repo:
        unknown = set(args.repo) - {r["name"] for r in repos}
        if unknown:
            parser.error(f"not in the manifest: {', '.join(sorted(unknown))}")
        repos = [r for r in repos if r["name"] in args.repo]
    loaded = json.loads(args.load.read_text()) if args.load else None

    errors: List[str] = []
    warnings: List[str] = []
    runs: Dict[str, Dict[str, Any]] = {}
    results: List[Dict[str, Any]] = []
    loc: Dict[str, Tuple[int, int]] = {}
    sample: Dict[str, List[Dict[str, Any]]] = {}
    for repo in repos:
        name = repo["name"]
        tree: Optional[Path] = None
        try:
            try:
                git_dir = find_git_dir(repo, args.mirror, args.trees, args.clone)
                tree = extract_tree(repo, git_dir, args.trees, warnings)
            except HarnessError:
                if loaded is None or not tree_path(repo, args.trees).is_dir():
                    if loaded is None:
                        raise
                else:
                    tree = tree_path(repo, args.trees)
            if loaded is not None:
                if name not in loaded.get("repos", {}):
                    raise HarnessError(f"{name}: not in {args.load}")
                run = loaded["repos"][name]
                if run.get("commit") != repo["commit"]:
                    warnings.append(f"{name}: {args.load} was run at {run.get('commit')}, "
                                    f"the manifest pins {repo['commit']}")
            else:
                print(f"... {name}: rankcheck on {tree}", file=sys.stderr, flush=True)
                run = run_rankcheck(repo, tree, command)  # type: ignore[arg-type]
        except HarnessError as exc:
            errors.append(str(exc))
            continue
        runs[name] = run
        if tree is not None:
            loc[name] = count_lines(tree, repo["subdir"])
        else:
            warnings.append(f"{name}: no tree, so no line counts and no drift check")
        results.append(evaluate(repo, run, tree, warnings))
        if args.sample:
            pool = [f for f in run["findings"] if not is_test_path(f["location"]["path"])]
            picked = random.Random(args.seed).sample(pool, min(args.sample, len(pool)))
            sample[name] = sorted(picked, key=lambda f: fingerprint(f))

    summary = summarize(results, runs, loc)
    if args.save:
        doc = {"version": SAVE_VERSION, "rankcheck": shlex.join(command),
               "python": sys.version.split()[0], "repos": runs}
        if loaded is not None:
            doc["rankcheck"] = loaded.get("rankcheck")
        args.save.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    if args.json:
        out: Dict[str, Any] = {
            "repos": summary["repos"],
            "total": {k: v for k, v in summary["total"].items() if not k.startswith("nt_")},
            "per_code": {code: {**{k: v for k, v in c.items() if not k.startswith("nt_")},
                                "precision": precision(c)[0], "precision_nontest": precision(c)[1]}
                         for code, c in summary["per_code"].items()},
            "classes": [{"label": lab, "class": cls, "count": n}
                        for (lab, cls), n in sorted(summary["classes"].items())],
            "details": [_jsonable(r) for r in results],
            "sample": {name: [fingerprint(f) for f in picked] for name, picked in sample.items()},
            "warnings": warnings,
            "errors": errors,
        }
        if args.compare:
            out["compare"] = compare(json.loads(args.compare.read_text()), runs, results, True)
        print(json.dumps(out, indent=1, sort_keys=True))
    else:
        print_text(results, summary, warnings, sample)
        if args.compare:
            compare(json.loads(args.compare.read_text()), runs, results, False)
        for error in errors:
            print(f"\nerror: {error}", file=sys.stderr)
    return 2 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
