"""The pre-commit hook, run by real pre-commit inside real temporary git repositories.

Most tests install the hook from this repo's `.pre-commit-hooks.yaml` as a `repo: local` hook with
`language: system` pointing at this checkout (fast, no network), so the manifest's file filter and
settings are the real ones and `git commit` is really blocked. One test goes through
`pre-commit try-repo`, which builds the hook's own virtualenv with `language: python` exactly as
users get it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
MANIFEST = REPO / ".pre-commit-hooks.yaml"
PRE_COMMIT = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))

needs_pre_commit = [
    pytest.mark.skipif(not Path(PRE_COMMIT).is_file(), reason="pre-commit is not installed"),
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]


def uses_pre_commit(test):
    for mark in needs_pre_commit:
        test = mark(test)
    return test

METRICS = """\
import torch.distributed as dist


def compute_mean(t):
    dist.all_reduce(t)
    return t
"""

TRAIN_CLEAN = """\
import torch.distributed as dist
from metrics import compute_mean


def step(t):
    compute_mean(t)
    if dist.get_rank() == 0:
        print("step done")
"""

TRAIN_HAZARD = """\
import torch.distributed as dist
from metrics import compute_mean


def step(t):
    if dist.get_rank() == 0:
        compute_mean(t)
"""
HAZARD_LINE = 7


def environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p),
    )
    return env


def run(args, cwd: Path, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def init_git_repo(path: Path, env: dict[str, str]) -> None:
    run(["git", "init", "-q", "-b", "main"], path, env)
    for key, value in (("user.name", "Test"), ("user.email", "test@example.com"),
                       ("commit.gpgsign", "false")):
        run(["git", "config", key, value], path, env)


def manifest_hook() -> dict:
    (hook,) = yaml.safe_load(MANIFEST.read_text())
    return hook


def test_manifest_declares_the_hook_users_expect():
    hook = manifest_hook()
    assert hook["id"] == "rankcheck"
    assert hook["entry"] == "rankcheck"
    assert hook["language"] == "python"
    assert hook["types_or"] == ["python", "pyi"]
    assert hook["require_serial"] is True


@pytest.fixture()
def project(tmp_path: Path):
    env = environment(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    init_git_repo(repo, env)
    (repo / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    (repo / "metrics.py").write_text(METRICS)
    (repo / "train.py").write_text(TRAIN_CLEAN)
    # The manifest's hook, run from this checkout instead of a built virtualenv.
    hook = dict(manifest_hook(), language="system", entry=f"{sys.executable} -m rankcheck")
    config = {"repos": [{"repo": "local", "hooks": [hook]}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    run(["git", "add", "-A"], repo, env)
    run(["git", "commit", "-q", "--no-verify", "-m", "initial"], repo, env)
    run([PRE_COMMIT, "install"], repo, env)
    return repo, env


def commit(repo: Path, env: dict[str, str], message: str, *files: str) -> subprocess.CompletedProcess:
    run(["git", "add", *files], repo, env)
    return run(["git", "commit", "-m", message], repo, env, check=False)


def commit_count(repo: Path, env: dict[str, str]) -> int:
    return int(run(["git", "rev-list", "--count", "HEAD"], repo, env).stdout)


@uses_pre_commit
def test_commit_introducing_a_hazard_is_blocked_even_when_the_collective_is_in_an_unchanged_module(
    project,
):
    repo, env = project
    (repo / "train.py").write_text(TRAIN_HAZARD)  # metrics.py, with the all_reduce, is untouched
    proc = commit(repo, env, "rank-0 only mean", "train.py")
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert f"train.py:{HAZARD_LINE}:" in output and "RC101" in output, output
    assert "metrics.py" not in output.split("RC101", 1)[0]  # reported on train.py, not metrics.py
    assert commit_count(repo, env) == 1


@uses_pre_commit
def test_clean_commit_passes(project):
    repo, env = project
    (repo / "train.py").write_text(TRAIN_CLEAN + "\n\ndef helper():\n    return 1\n")
    (repo / "util.py").write_text("def double(x):\n    return 2 * x\n")
    proc = commit(repo, env, "clean change", "train.py", "util.py")
    output = proc.stdout + proc.stderr  # git shows the hook's report on stderr
    assert proc.returncode == 0, output
    assert "rankcheck" in output and "Passed" in output
    assert commit_count(repo, env) == 2


@uses_pre_commit
def test_hook_reports_only_on_the_staged_files(project):
    repo, env = project
    # A hazard already committed without the hook stays out of an unrelated commit's way.
    (repo / "legacy.py").write_text(TRAIN_HAZARD)
    run(["git", "add", "legacy.py"], repo, env)
    run(["git", "commit", "-q", "--no-verify", "-m", "legacy"], repo, env)
    (repo / "util.py").write_text("def double(x):\n    return 2 * x\n")
    proc = commit(repo, env, "unrelated", "util.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # ...but the same hook run on that file does find it.
    direct = run([PRE_COMMIT, "run", "rankcheck", "--files", "legacy.py"], repo, env, check=False)
    assert direct.returncode != 0 and "legacy.py" in direct.stdout and "RC101" in direct.stdout


@uses_pre_commit
def test_non_python_files_do_not_run_the_hook(project):
    repo, env = project
    (repo / "NOTES.md").write_text("if rank == 0: dist.all_reduce(t)\n")
    proc = commit(repo, env, "notes", "NOTES.md")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "rankcheck" in output and "Skipped" in output


def _snapshot_of_this_checkout(dest: Path, env: dict[str, str]) -> None:
    """A committed copy of the package, as `try-repo` installs from git (the checkout's working
    tree may hold uncommitted and untracked files)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in ("rankcheck", "rules"):
        shutil.copytree(REPO / name, dest / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml"):
        if (REPO / name).is_file():
            shutil.copy2(REPO / name, dest / name)
    if not (dest / "README.md").is_file():
        (dest / "README.md").write_text("rankcheck\n")  # pyproject names a readme
    init_git_repo(dest, env)
    run(["git", "add", "-A"], dest, env)
    run(["git", "commit", "-q", "-m", "snapshot"], dest, env)


@uses_pre_commit
def test_try_repo_builds_the_python_hook_and_blocks_the_hazard(tmp_path):
    env = environment(tmp_path)
    hook_repo = tmp_path / "rankcheck-src"
    hook_repo.mkdir()
    _snapshot_of_this_checkout(hook_repo, env)
    env.pop("PYTHONPATH")  # the hook must run from the virtualenv pre-commit builds

    target = tmp_path / "target"
    target.mkdir()
    init_git_repo(target, env)
    (target / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    (target / "metrics.py").write_text(METRICS)
    (target / "train.py").write_text(TRAIN_HAZARD)
    run(["git", "add", "-A"], target, env)

    proc = run([PRE_COMMIT, "try-repo", str(hook_repo), "rankcheck", "--files", "train.py"],
               target, env, check=False)
    output = proc.stdout + proc.stderr
    if "Could not find a version" in output or "Failed to establish a new connection" in output:
        pytest.skip("pre-commit could not install the hook's dependencies (no package index)")
    assert proc.returncode == 1, output
    assert f"train.py:{HAZARD_LINE}:" in output and "RC101" in output, output

    (target / "train.py").write_text(TRAIN_CLEAN)
    clean = run([PRE_COMMIT, "try-repo", str(hook_repo), "rankcheck", "--files", "train.py"],
                target, env, check=False)

    assert clean.returncode == 0, clean.stdout + clean.stderr
