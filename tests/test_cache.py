"""The summary cache: hits and misses, invalidation by content, version and summarizer source,
damaged entries rebuilt, two runs sharing one cache at once, and the directory's markers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Tuple

import pytest
from corpus_support import CORPUS

from rankcheck.api import run_check
from rankcheck.catalog import load_catalog
from rankcheck.driver import cache as cache_module
from rankcheck.driver.discover import discover
from rankcheck.driver.summaries import PipelineOptions, PipelineStats, collect_summaries

REPO = Path(__file__).resolve().parent.parent
OLD = 1_600_000_000  # an mtime well in the past: not "racily clean"


def make_project(root: Path, groups: Tuple[str, ...] = ("core",), limit: int = 40) -> Path:
    """A project of real corpus files (single-file cases), with their mtimes in the past."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[tool.rankcheck]\n")
    count = 0
    for group in groups:
        for source in sorted((CORPUS / group).glob("*.py")):
            if count >= limit:
                break
            target = root / f"{group}_{source.name}"
            target.write_bytes(source.read_bytes())
            os.utime(target, (OLD, OLD))
            count += 1
    return root


def summaries(root: Path, cache_dir: Path, **options) -> Tuple[list, PipelineStats]:
    stats = PipelineStats()
    files = discover([root], root)
    result = collect_summaries(files, options.pop("overrides", {}), load_catalog(), PipelineOptions(cache_dir=cache_dir, **options), stats)
    return result, stats


@pytest.fixture(autouse=True)
def fresh_memory():
    """Each test reads the disk as a new process would (the in-process layer serves the LSP)."""
    cache_module.forget_memory()
    yield
    cache_module.forget_memory()


def entry_files(cache_dir: Path) -> List[Path]:
    return sorted(p for p in cache_dir.glob("v*/m/*/*") if p.is_file())


# ------------------------------------------------------------------------------------------------


def test_cache_directory_is_tagged_and_ignored(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", limit=3)
    cache_dir = tmp_path / "cache"
    summaries(project, cache_dir)
    tag = (cache_dir / "CACHEDIR.TAG").read_text()
    assert tag.startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache_dir / ".gitignore").read_text().splitlines()[-1] == "*"


def test_default_cache_dir_is_under_the_root_and_not_analysed(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", limit=3)
    result = run_check([project], root=project, use_cache=True)
    assert (project / ".rankcheck_cache" / "CACHEDIR.TAG").is_file()
    again = run_check([project], root=project, use_cache=True)
    assert again.files_read == result.files_read  # the cache's own files are never discovered


def test_second_run_parses_nothing_and_gives_equal_summaries(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    cache_dir = tmp_path / "cache"
    first, cold = summaries(project, cache_dir, prefilter=False)
    assert cold.parsed == cold.files > 0
    cache_module.forget_memory()
    second, warm = summaries(project, cache_dir, prefilter=False)
    assert warm.parsed == 0 and warm.cache_hits == warm.files
    assert second == first


def test_content_change_is_seen_even_with_the_same_size_and_mtime(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", limit=5)
    cache_dir = tmp_path / "cache"
    summaries(project, cache_dir, prefilter=False)
    target = sorted(project.glob("*.py"))[0]
    text = target.read_text()
    # Same length, same mtime: only ctime/inode (and the content) differ.
    changed = text.replace("def ", "def_", 1).replace("def_", "def ", 1).replace("rank", "RANK", 1)
    assert len(changed) == len(text) and changed != text
    target.write_text(changed)
    os.utime(target, (OLD, OLD))
    cache_module.forget_memory()
    result, stats = summaries(project, cache_dir, prefilter=False)
    assert stats.parsed == 1
    expected, _ = summaries(project, tmp_path / "fresh-cache", prefilter=False)
    assert result == expected


def test_racily_clean_file_is_rehashed_next_time(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", limit=3)
    cache_dir = tmp_path / "cache"
    target = sorted(project.glob("*.py"))[0]
    target.write_text(target.read_text() + "\n# just edited\n")  # mtime: now
    summaries(project, cache_dir, prefilter=False)
    index = cache_module.SummaryCache(cache_dir)._read_index()
    assert str(target) not in index  # too recent to trust its stat
    assert len(index) == 2


def test_unsaved_buffer_replaces_the_file_and_is_cached_by_content(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", limit=3)
    cache_dir = tmp_path / "cache"
    target = sorted(project.glob("*.py"))[0]
    buffer = "import torch.distributed as dist\n\ndef unsaved():\n    dist.barrier()\n"
    first, _stats = summaries(project, cache_dir, prefilter=False, overrides={str(target): buffer})
    names = [f.name for s in first for f in s.functions]
    assert "unsaved" in names
    cache_module.forget_memory()
    second, again = summaries(project, cache_dir, prefilter=False, overrides={str(target): buffer})
    assert again.parsed == 0 and second == first


def test_version_change_starts_a_fresh_namespace(tmp_path: Path, monkeypatch) -> None:
    project = make_project(tmp_path / "p", limit=4)
    cache_dir = tmp_path / "cache"
    summaries(project, cache_dir, prefilter=False)
    monkeypatch.setattr(cache_module, "__version__", "999.0.0")
    monkeypatch.setattr(cache_module, "_namespace_memo", None)
    _, stats = summaries(project, cache_dir, prefilter=False)
    assert stats.parsed == stats.files
    assert len([p for p in cache_dir.iterdir() if p.name.startswith("v")]) == 2


def _copy_package(destination: Path) -> Path:
    shutil.copytree(REPO / "rankcheck", destination / "rankcheck", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "rules", destination / "rules")
    return destination


def _cli_stats(package_root: Path, project: Path, cache_dir: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(package_root), RANKCHECK_STATS="1", RANKCHECK_PREFILTER="0")
    out = subprocess.run(
        [sys.executable, "-m", "rankcheck", "check", ".", "--cache-dir", str(cache_dir), "--format", "json", "--exit-zero"],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return out.stderr


@pytest.mark.slow
def test_editing_the_summarizer_source_or_version_invalidates(tmp_path: Path) -> None:
    """A real installation (a copy of the package) edited the way a developer or an upgrade would."""
    project = make_project(tmp_path / "p", limit=4)
    package = _copy_package(tmp_path / "pkg")
    cache_dir = tmp_path / "cache"
    assert "computed 4 summaries" in _cli_stats(package, project, cache_dir)
    assert _nothing_computed(_cli_stats(package, project, cache_dir))
    # The summarizer, a module it imports, and one that module imports in turn.
    for name in ("frontend/lower.py", "frontend/positions.py", "program/ir.py"):
        source = package / "rankcheck" / name
        source.write_text(source.read_text() + "\n# a change to the summarizer\n")
        assert "computed 4 summaries" in _cli_stats(package, project, cache_dir), name
    init = package / "rankcheck" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', '__version__ = "9'))
    assert "computed 4 summaries" in _cli_stats(package, project, cache_dir)
    assert _nothing_computed(_cli_stats(package, project, cache_dir))


def _nothing_computed(stats: str) -> bool:
    # Nothing changed at all: the whole run's findings come from the cache, before any summary.
    return "computed 0 summaries" in stats or "unchanged since a run with the same inputs" in stats


def test_damaged_entries_and_index_are_rebuilt_without_a_traceback(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", limit=6)
    cache_dir = tmp_path / "cache"
    expected, _ = summaries(project, cache_dir, prefilter=False)
    entries = entry_files(cache_dir)
    assert len(entries) == 6
    entries[0].write_bytes(entries[0].read_bytes()[:40])  # truncated inside the header
    entries[1].write_bytes(entries[1].read_bytes()[:-200])  # truncated inside the pickle
    entries[2].write_bytes(b"\x80\x04garbage that is not a pickle at all")
    header_end = entries[3].read_bytes().index(b"\n") + 1
    entries[3].write_bytes(b"rankcheck-cache\x00v0-foreign\n" + entries[3].read_bytes()[header_end:])  # another namespace's
    entries[4].write_bytes(b"")
    index = next(cache_dir.glob("v*/stat-index"))
    index.write_bytes(index.read_bytes()[:30])
    cache_module.forget_memory()
    result, stats = summaries(project, cache_dir, prefilter=False)
    assert result == expected
    assert stats.parsed == 5
    cache_module.forget_memory()
    again, warm = summaries(project, cache_dir, prefilter=False)
    assert warm.parsed == 0 and again == expected  # rebuilt entries are whole again


def test_unwritable_cache_location_is_not_an_error(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", limit=3)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    expected, _ = summaries(project, None, prefilter=False)  # type: ignore[arg-type]
    result, stats = summaries(project, blocker / "cache", prefilter=False)
    assert result == expected and stats.parsed == 3


def test_display_paths_follow_the_working_directory(tmp_path: Path, monkeypatch) -> None:
    project = make_project(tmp_path / "p", limit=3)
    cache_dir = tmp_path / "cache"
    monkeypatch.chdir(project)
    first, _ = summaries(project, cache_dir, prefilter=False)
    assert all(not Path(s.path).is_absolute() for s in first)
    monkeypatch.chdir(tmp_path)
    second, stats = summaries(project, cache_dir, prefilter=False)
    assert stats.parsed == 0
    assert [s.path for s in second] == [str(Path("p") / Path(s.path)) for s in first]


@pytest.mark.slow
def test_two_runs_sharing_a_cache_at_once_leave_it_consistent(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", groups=("core", "runnable"), limit=60)
    cache_dir = tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH=str(REPO), RANKCHECK_STATS="1")
    command = [sys.executable, "-m", "rankcheck", "check", ".", "--cache-dir", str(cache_dir), "--format", "json", "--exit-zero", "--jobs", "1"]
    runs = [subprocess.Popen(command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [o[1] for o in outputs]
    assert "Traceback" not in outputs[0][1] + outputs[1][1]
    reference = subprocess.run(command[:5] + ["--no-cache", "--format", "json", "--exit-zero"], cwd=project, env=env, capture_output=True, text=True, timeout=600)
    expected = json.loads(reference.stdout)
    assert expected, "the project should have findings"
    assert json.loads(outputs[0][0]) == expected and json.loads(outputs[1][0]) == expected
    # Every entry is whole: a third run reads them all and parses nothing (the stored whole-run
    # results are removed first, or it would not read the entries at all).
    for results in cache_dir.glob("v*/r"):
        shutil.rmtree(results)
    third = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=600)
    assert json.loads(third.stdout) == expected
    assert "computed 0 summaries" in third.stderr, third.stderr
    assert not list(cache_dir.glob("v*/m/*/.tmp-*")) and not list(cache_dir.glob("v*/.tmp-*"))


# ------------------------------------------------------------------------------------------------
# whole-run results (for the analysis-skipping path the API can take)


def test_results_key_follows_every_input(tmp_path: Path) -> None:
    from rankcheck.driver.summaries import results_key

    project = make_project(tmp_path / "p", limit=4)
    cache_dir = tmp_path / "cache"
    options = PipelineOptions(cache_dir=cache_dir)
    files = discover([project], project)
    assert results_key(files, {}, PipelineOptions(), "x") is None  # no cache, no key
    assert results_key(files, {}, options, "x") is None  # nothing known yet without reading
    collect_summaries(files, {}, load_catalog(), options)
    key = results_key(files, {}, options, "x")
    assert key is not None and key == results_key(files, {}, options, "x")
    assert results_key(files, {}, options, "y") != key  # the caller's configuration
    one_reported = discover([files[0].path], project)
    assert results_key(one_reported, {}, options, "x") != key  # what is reported
    assert results_key(files, {str(files[1].path): "x = 1\n"}, options, "x") not in (None, key)  # a buffer
    files[2].path.write_text(files[2].path.read_text() + "\n# edited\n")
    assert results_key(files, {}, options, "x") is None  # changed: the run has work to do


def test_result_store_round_trip_and_damage(tmp_path: Path) -> None:
    store = cache_module.ResultStore(tmp_path / "cache")
    assert store.load("k1") is None
    store.store("k1", ["finding"])
    assert store.load("k1") == ["finding"]
    stored = next((tmp_path / "cache").glob("v*/r/k1"))
    stored.write_bytes(stored.read_bytes()[:-5])
    assert store.load("k1") is None
    for n in range(cache_module.RESULTS_KEPT + 5):
        store.store(f"key{n}", n)
    assert len(list(stored.parent.iterdir())) == cache_module.RESULTS_KEPT
    assert store.load(f"key{cache_module.RESULTS_KEPT + 4}") == cache_module.RESULTS_KEPT + 4


# ------------------------------------------------------------------------------------------------
# whole-run results: a run whose inputs all match an earlier run's gives that run's findings


def _cli(project: Path, cache_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, RANKCHECK_STATS="1")
    return subprocess.run(
        [sys.executable, "-m", "rankcheck", "--cache-dir", str(cache_dir), "--output-format", "json", *args, str(project)],
        cwd=project, capture_output=True, text=True, env=env, timeout=300,
    )


def _codes(run: subprocess.CompletedProcess) -> List[Tuple[str, int]]:
    return sorted((f["code"], f["location"]["line"]) for f in json.loads(run.stdout)["findings"])


HELPER_MODULE = "import torch.distributed as dist\n\n\ndef sync(t):\n    dist.all_reduce(t)\n"
CALLER_MODULE = (
    "import torch.distributed as dist\n\nfrom helper import sync\n\n\n"
    "def step(t):\n    if dist.get_rank() == 0:\n        sync(t)\n"
)


def _caller_and_helper(project: Path) -> Path:
    """train.py calls helper.sync, which all-reduces, on rank 0 only: RC101 on train.py:8."""
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.rankcheck]\n")
    (project / "helper.py").write_text(HELPER_MODULE)
    (project / "train.py").write_text(CALLER_MODULE)
    for path in project.iterdir():
        os.utime(path, (OLD, OLD))
    return project


@pytest.mark.slow
def test_unchanged_inputs_give_the_earlier_findings_and_any_change_is_seen(tmp_path: Path) -> None:
    project = _caller_and_helper(tmp_path / "p")
    cache_dir = tmp_path / "cache"
    first = _cli(project, cache_dir)
    assert _codes(first) == [("RC101", 8)], first.stderr
    assert "unchanged since a run" not in first.stderr
    second = _cli(project, cache_dir)
    assert "unchanged since a run" in second.stderr
    assert second.stdout == first.stdout and second.returncode == first.returncode == 1

    # A helper two modules away stops issuing the collective: the caller's finding goes.
    (project / "helper.py").write_text(HELPER_MODULE.replace("dist.all_reduce(t)", "return t"))
    os.utime(project / "helper.py", (OLD + 10, OLD + 10))
    third = _cli(project, cache_dir)
    assert "unchanged since a run" not in third.stderr
    assert _codes(third) == [] and third.returncode == 0

    # Back as it was: served again, and right.
    (project / "helper.py").write_text(HELPER_MODULE)
    os.utime(project / "helper.py", (OLD + 20, OLD + 20))
    assert _codes(_cli(project, cache_dir)) == [("RC101", 8)]
    assert "unchanged since a run" in _cli(project, cache_dir).stderr

    # Configuration, command-line selection and the paths asked for are inputs too.
    assert _codes(_cli(project, cache_dir, "--ignore", "RC101")) == []
    (project / "pyproject.toml").write_text('[tool.rankcheck]\nignore = ["RC101"]\n')
    os.utime(project / "pyproject.toml", (OLD + 30, OLD + 30))
    assert _codes(_cli(project, cache_dir)) == []
    (project / "pyproject.toml").write_text("[tool.rankcheck]\n")
    os.utime(project / "pyproject.toml", (OLD + 40, OLD + 40))
    only_helper = subprocess.run(
        [sys.executable, "-m", "rankcheck", "--cache-dir", str(cache_dir), "--output-format", "json", "helper.py"],
        cwd=project, capture_output=True, text=True, timeout=300,
    )
    assert json.loads(only_helper.stdout)["findings"] == [] and only_helper.returncode == 0


def test_runs_on_unsaved_buffers_are_not_stored_as_whole_results(tmp_path: Path) -> None:
    """The language server's runs: each edit is a new state, so none is keyed or stored."""
    project = _caller_and_helper(tmp_path / "p")
    cache_dir = tmp_path / "cache"
    buffer = {str((project / "helper.py").resolve()): HELPER_MODULE.replace("all_reduce", "all_gather")}
    for _ in range(2):
        result = run_check([project / "train.py"], root=project, sources=buffer, use_cache=True, cache_dir=cache_dir)
        assert [(f.code, f.location.line) for f in result.findings] == [("RC101", 8)]
    assert not list(cache_dir.glob("v*/r/*"))
    run_check([project / "train.py"], root=project, use_cache=True, cache_dir=cache_dir)
    assert len(list(cache_dir.glob("v*/r/*"))) == 1  # a run on the files themselves is


# ------------------------------------------------------------------------------------------------
# eviction: what no run used for the maximum age goes, at most one sweep a day

DAY = 86400.0


def _last_used(path: Path, days_ago: float) -> None:
    when = time.time() - days_ago * DAY
    os.utime(path, (when, when))


def _sweep_due(cache_dir: Path) -> None:
    _last_used(cache_dir / "last-sweep", 2)


def test_summaries_no_run_read_for_the_max_age_are_swept(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", limit=6)
    cache_dir = tmp_path / "cache"
    summaries(project, cache_dir, prefilter=False)
    edited = sorted(project.glob("*.py"))[0]
    edited.write_text(edited.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    os.utime(edited, (OLD + 5, OLD + 5))
    summaries(project, cache_dir, prefilter=False)
    assert len(entry_files(cache_dir)) == 7  # the edited file's first version is still there
    for entry in entry_files(cache_dir):
        _last_used(entry, 40)

    # A day has not passed since the last sweep: nothing goes, and a run reading an entry marks it.
    cache_module.forget_memory()
    _, stats = summaries(project, cache_dir, prefilter=False)
    assert stats.parsed == 0 and len(entry_files(cache_dir)) == 7
    assert sum(time.time() - p.stat().st_mtime < DAY for p in entry_files(cache_dir)) == 6

    _sweep_due(cache_dir)
    cache_module.forget_memory()
    _, stats = summaries(project, cache_dir, prefilter=False)
    assert stats.parsed == 0
    assert len(entry_files(cache_dir)) == 6  # the version no run reads any more is gone
    cache_module.forget_memory()
    _, stats = summaries(project, cache_dir, prefilter=False)
    assert stats.parsed == 0 and stats.cache_hits == 6


def test_namespaces_no_run_used_for_the_max_age_are_swept(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", limit=2)
    cache_dir = tmp_path / "cache"
    summaries(project, cache_dir, prefilter=False)
    old_space = cache_dir / "v1-00000000000000000000"
    recent_space = cache_dir / "v1-11111111111111111111"
    for space, days in ((old_space, 40), (recent_space, 3)):
        (space / "m" / "ab").mkdir(parents=True)
        (space / "m" / "ab" / "entry").write_bytes(b"x")
        (space / "last-used").write_bytes(b"")
        _last_used(space / "last-used", days)
    (cache_dir / "notes").mkdir()  # not ours: never touched
    _sweep_due(cache_dir)
    summaries(project, cache_dir, prefilter=False)
    assert not old_space.exists()
    assert recent_space.exists() and (cache_dir / "notes").exists()
    assert (cache_dir / cache_module.namespace() / "last-used").exists()


def test_sweep_drops_index_lines_of_gone_files_and_stale_temporary_files(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", limit=3)
    cache_dir = tmp_path / "cache"
    summaries(project, cache_dir, prefilter=False)
    space = cache_dir / cache_module.namespace()
    index_path = space / "stat-index"
    header = cache_module.MAGIC + space.name.encode() + b"\n"
    assert len(cache_module._read_index_file(index_path, header)) == 3
    gone = sorted(project.glob("*.py"))[0]
    gone.unlink()
    # Where a killed run can leave a temporary file: among the entries, and next to the files it
    # writes atomically elsewhere (`last-sweep`, the stat index, the whole-run results).
    (space / "r").mkdir(exist_ok=True)
    stale, live = [], []
    for folder in (entry_files(cache_dir)[0].parent, cache_dir, space, space / "r"):
        stale_temp, live_temp = folder / ".tmp-stale", folder / ".tmp-live"
        stale_temp.write_bytes(b"half")
        live_temp.write_bytes(b"half")  # another run is writing it now
        _last_used(stale_temp, 2)
        stale.append(stale_temp)
        live.append(live_temp)
    report = cache_module.sweep(cache_dir)
    assert report.index_lines == 1
    assert str(gone.resolve()) not in cache_module._read_index_file(index_path, header)
    assert [p for p in stale if p.exists()] == []
    assert [p for p in live if not p.exists()] == []
    assert index_path.exists() and (space / "last-used").exists()
    assert not cache_module.sweep_due(cache_dir)


def test_max_age_comes_from_the_environment(tmp_path: Path, monkeypatch) -> None:
    project = make_project(tmp_path / "p", limit=2)
    cache_dir = tmp_path / "cache"
    summaries(project, cache_dir, prefilter=False)
    for entry in entry_files(cache_dir):
        _last_used(entry, 3)
    for value in ("", "soon", "-1", "0"):
        monkeypatch.setenv("RANKCHECK_CACHE_MAX_AGE_DAYS", value)
        assert cache_module.max_age_days() == cache_module.DEFAULT_MAX_AGE_DAYS
    assert cache_module.sweep(cache_dir).entries == 0
    monkeypatch.setenv("RANKCHECK_CACHE_MAX_AGE_DAYS", "2.5")
    assert cache_module.sweep(cache_dir).entries == 2
    assert entry_files(cache_dir) == []
