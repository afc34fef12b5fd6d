"""The pipeline: parallel summaries equal serial ones, the pool falls back cleanly where it cannot
start, order is kept, unreadable files become RC001, and the progress bar stays out of pipes."""

from __future__ import annotations

import io
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest
from corpus_support import CORPUS

from rankcheck.api import run_check
from rankcheck.catalog import load_catalog
from rankcheck.driver import progress as progress_module
from rankcheck.driver.discover import discover
from rankcheck.driver.summaries import PipelineOptions, PipelineStats, collect_summaries

REPO = Path(__file__).resolve().parent.parent


def corpus_files():
    return discover([CORPUS], CORPUS)


def some_files():
    """A part of the corpus, for the tests about where the pool runs (not what it computes)."""
    return discover([CORPUS / "runnable"], CORPUS / "runnable")


def serial(files):
    return collect_summaries(files, {}, load_catalog(), PipelineOptions(jobs=1, prefilter=False))


@pytest.fixture(scope="module")
def serial_corpus():
    stats = PipelineStats()
    result = collect_summaries(corpus_files(), {}, load_catalog(), PipelineOptions(jobs=1, prefilter=False), stats)
    assert stats.workers == 0
    return result


@pytest.mark.slow
def test_parallel_summaries_equal_serial_ones_on_the_corpus(serial_corpus) -> None:
    stats = PipelineStats()
    parallel = collect_summaries(corpus_files(), {}, load_catalog(), PipelineOptions(jobs=2, prefilter=False, parallel_min_bytes=0), stats)
    assert stats.workers == 2 and not stats.pool_error, stats.pool_error
    assert stats.pooled == len(parallel) == stats.parsed  # every summary came from a worker
    assert parallel == serial_corpus


def test_parallel_run_with_prefilter_gives_the_same_findings(tmp_path: Path) -> None:
    case = CORPUS / "core" / "rc101_metric_helper_two_modules_away"
    serial = run_check([case / "train.py"], root=case, jobs=1)
    parallel = run_check([case / "train.py"], root=case, jobs=2)
    assert [f.to_dict() for f in parallel.findings] == [f.to_dict() for f in serial.findings]
    assert serial.findings


def _daemon_child(queue) -> None:  # pragma: no cover - runs in a daemonic child
    stats = PipelineStats()
    result = collect_summaries(some_files(), {}, load_catalog(), PipelineOptions(jobs=2, prefilter=False, parallel_min_bytes=0), stats)
    queue.put((result, stats.workers + stats.pooled))


def test_a_daemonic_caller_falls_back_to_serial() -> None:
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    queue = context.Queue()
    child = context.Process(target=_daemon_child, args=(queue,), daemon=True)
    child.start()
    result, workers = queue.get(timeout=300)
    child.join(timeout=60)
    assert workers == 0  # daemonic processes may not have children: it ran in the caller
    assert result == serial(some_files())


def test_pool_started_from_a_threaded_caller() -> None:
    """The language server runs the analysis next to other threads: fork is not safe there."""
    import threading

    box = {}

    def run() -> None:
        stats = PipelineStats()
        box["result"] = collect_summaries(some_files(), {}, load_catalog(), PipelineOptions(jobs=2, prefilter=False, parallel_min_bytes=0), stats)
        box["workers"], box["pooled"], box["error"] = stats.workers, stats.pooled, stats.pool_error

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=300)
    assert box["workers"] == 2 and box["pooled"] == len(box["result"]), box["error"]
    assert box["result"] == serial(some_files())


def test_order_is_kept_and_unreadable_files_become_problems(tmp_path: Path) -> None:
    (tmp_path / "a_good.py").write_text("import torch.distributed as dist\n\ndef f():\n    dist.barrier()\n")
    (tmp_path / "b_latin1.py").write_bytes(b"x = '\xe9'\n")
    (tmp_path / "c_plain.py").write_text("y = 2\n")
    files = discover([tmp_path], tmp_path)
    for options in (PipelineOptions(jobs=1), PipelineOptions(jobs=2, parallel_min_bytes=0), PipelineOptions(cache_dir=tmp_path / ".cache")):
        result = collect_summaries(files, {}, load_catalog(), options)
        assert [s.module for s in result] == [f.module for f in files]
        assert [s.path for s in result] == [f.display for f in files]
        problems = {Path(s.path).name: s.problem for s in result}
        assert problems["b_latin1.py"] is not None and "utf-8" in problems["b_latin1.py"].message
        assert problems["a_good.py"] is None and problems["c_plain.py"] is None


class _FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_draws_on_a_terminal_only(monkeypatch) -> None:
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    monkeypatch.setattr(progress_module, "REFRESH", 0.0)
    monkeypatch.delenv("NO_PROGRESS", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    terminal, pipe = _FakeTerminal(), io.StringIO()
    for stream in (terminal, pipe):
        bar = progress_module.Progress(stream=stream)
        bar.add_total(4)
        bar.advance(3)
        bar.close()
    assert "3/4 files" in terminal.getvalue() and terminal.getvalue().endswith("\r\x1b[2K")
    assert pipe.getvalue() == ""


def test_progress_bar_waits_a_second_before_drawing(monkeypatch) -> None:
    monkeypatch.delenv("NO_PROGRESS", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    terminal = _FakeTerminal()
    bar = progress_module.Progress(stream=terminal)
    bar.add_total(2)
    bar.advance(2)
    bar.close()
    assert terminal.getvalue() == ""  # a fast run never flickers


def test_cli_stderr_is_silent_in_a_pipe(tmp_path: Path) -> None:
    case = CORPUS / "core" / "rc101_metric_helper_two_modules_away"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("RANKCHECK_STATS", None)
    out = subprocess.run(
        [sys.executable, "-m", "rankcheck", "check", str(case), "--root", str(case), "--no-cache", "--jobs", "2"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert out.returncode == 1
    assert out.stderr == ""


def _die(task):  # pragma: no cover - runs in a worker, which it kills
    os._exit(3)


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="the patched worker reaches the child by fork")
def test_a_worker_that_dies_falls_back_to_serial_and_says_why(monkeypatch) -> None:
    from rankcheck.driver import pool

    files = some_files()
    expected = serial(files)
    monkeypatch.setattr(pool, "work_one", _die)
    monkeypatch.setattr(pool, "start_method", lambda: "fork")
    stats = PipelineStats()
    result = collect_summaries(files, {}, load_catalog(), PipelineOptions(jobs=2, prefilter=False, parallel_min_bytes=0), stats)
    assert result == expected
    assert stats.pooled == 0 and "BrokenProcessPool" in stats.pool_error
