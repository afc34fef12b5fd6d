"""What a new user meets in the first minutes, driven as they drive it (the CLI as a subprocess):
runs that say what they checked, help that lists every command, their own mistakes reported as
usage errors, the version they can report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rankcheck import __version__

pytestmark = pytest.mark.slow

NO_PYTHON = "rankcheck: warning: No Python files found under the given path(s)\n"
HAZARD = "import torch.distributed as dist\n\n\ndef step(t):\n    if dist.get_rank() == 0:\n        dist.all_reduce(t)\n"


def run(args, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("RANKCHECK_STATS", None)
    return subprocess.run([sys.executable, "-m", "rankcheck", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    return tmp_path


def test_an_empty_directory_warns_that_no_python_file_was_found(project: Path) -> None:
    (project / "empty").mkdir()
    proc = run(["empty"], project)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", NO_PYTHON)


def test_a_directory_without_python_files_warns(project: Path) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "README.md").write_text("# notes\n")
    proc = run(["docs"], project)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", NO_PYTHON)


def test_a_named_non_python_file_is_skipped_with_a_warning_not_checked_as_python(project: Path) -> None:
    (project / "notes.txt").write_text("if rank == 0: dist.all_reduce(t)\n")
    proc = run(["notes.txt"], project)
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr == "rankcheck: warning: notes.txt is not a Python file (.py, .pyi or a python shebang); skipped\n" + NO_PYTHON
    # Beside a Python file it is skipped and the Python file is checked.
    (project / "clean.py").write_text("x = 1\n")
    both = run(["notes.txt", "clean.py"], project)
    assert both.returncode == 0 and both.stdout == "All checks passed!\n"
    assert NO_PYTHON not in both.stderr and "notes.txt is not a Python file" in both.stderr


def test_a_script_with_a_python_shebang_is_python(project: Path) -> None:
    (project / "launch").write_text("#!/usr/bin/env python3\n" + HAZARD)
    proc = run(["--format", "concise", "launch"], project)
    assert proc.returncode == 1 and proc.stdout.startswith("launch:7:9: RC101 "), proc.stdout + proc.stderr


def test_a_clean_project_says_all_checks_passed_and_machine_formats_stay_as_they_were(project: Path) -> None:
    (project / "train.py").write_text("import torch.distributed as dist\n\n\ndef step(t):\n    dist.all_reduce(t)\n")
    for fmt in ("full", "concise"):
        proc = run(["--format", fmt, "."], project)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "All checks passed!\n", "")
    doc = json.loads(run(["--format", "json", "."], project).stdout)
    assert doc["findings"] == [] and doc["files_checked"] == 1
    assert run(["--format", "json-lines", "."], project).stdout == ""
    assert json.loads(run(["--format", "sarif", "."], project).stdout)["runs"][0]["results"] == []
    # An empty directory in a machine format: the same empty document, the warning on stderr only.
    (project / "empty").mkdir()
    empty = run(["--format", "json", "empty"], project)
    assert json.loads(empty.stdout)["files_checked"] == 0 and empty.stderr == NO_PYTHON


def test_findings_are_not_followed_by_all_checks_passed(project: Path) -> None:
    (project / "train.py").write_text(HAZARD)
    proc = run(["train.py"], project)
    assert proc.returncode == 1 and "All checks passed!" not in proc.stdout


def test_an_unwritable_output_is_a_usage_error_and_the_other_outputs_are_written(project: Path) -> None:
    (project / "train.py").write_text(HAZARD)
    proc = run(["-o", "/proc/nope.txt", "train.py"], project)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == "rankcheck: error: cannot write the output to /proc/nope.txt: No such file or directory\n"
    both = run(["--format", "json:/proc/nope.json", "--format", "concise", "train.py"], project)
    assert both.returncode == 2 and "internal error" not in both.stderr
    assert "cannot write the output to /proc/nope.json" in both.stderr
    assert both.stdout.startswith("train.py:6:9: RC101 ")


@pytest.mark.parametrize("args, message", [
    (["--root", "nope", "."], "rankcheck: error: --root nope: no such directory\n"),
    (["--jobs", "0", "."], "rankcheck: error: --jobs must be at least 1 (got 0)\n"),
])
def test_other_mistakes_in_the_options_are_usage_errors(project: Path, args, message) -> None:
    proc = run(args, project)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", message)


COMMANDS = ("check", "rule", "verify", "fr", "lsp", "daemon")


def test_help_lists_every_command_with_one_line(project: Path) -> None:
    from rankcheck.cli import COMMANDS as TABLE

    proc = run(["--help"], project)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: rankcheck [COMMAND] [options] [PATHS ...]\n")
    listed = {}
    for line in proc.stdout.splitlines():
        words = line.split(None, 1)
        if line.startswith("  ") and not line.startswith("   ") and words and words[0] in TABLE:
            listed[words[0]] = words[1]
    assert set(COMMANDS) <= set(listed) and set(listed) == set(TABLE)
    assert all(listed[name] == TABLE[name].help for name in listed)
    for name in COMMANDS:
        sub = run([name, "--help"], project)
        assert sub.returncode == 0 and sub.stdout.startswith(f"usage: rankcheck {name}"), (name, sub.stdout[:200], sub.stderr[-300:])


def test_version(project: Path) -> None:
    proc = run(["--version"], project)
    assert (proc.returncode, proc.stdout) == (0, f"rankcheck {__version__}\n")


def test_readmes_example_is_what_the_set_up_command_prints() -> None:
    """README's first block is the output of the shipped example its set-up command checks
    (paths relative to where it runs, here the example's own folder)."""
    import re

    repo = Path(__file__).resolve().parent.parent
    readme = (repo / "README.md").read_text(encoding="utf-8")
    example = re.search(r"```\n(.*?)```", readme, flags=re.S).group(1)  # type: ignore[union-attr]
    command = re.search(r"pip install -e \. && rankcheck (\S+)\n", readme).group(1)  # type: ignore[union-attr]
    proc = run(["--no-cache", "--root", ".", "."], repo / command)  # the example alone: the same finding, faster
    assert proc.returncode == 1 and proc.stdout == example, proc.stdout


def test_a_cache_that_cannot_be_written_is_named_and_the_run_goes_on(project: Path) -> None:
    (project / "clean.py").write_text("x = 1\n")
    (project / "blocker").write_text("a file where the cache's directory would go\n")
    proc = run(["check", "--cache-dir", "blocker/cache", "clean.py"], project)
    assert proc.returncode == 0, proc.stderr
    assert "All checks passed!" in proc.stdout
    assert "cannot write the cache at blocker/cache" in proc.stderr
    writable = run(["check", "--cache-dir", "cache", "clean.py"], project)
    assert writable.returncode == 0 and "cannot write the cache" not in writable.stderr
