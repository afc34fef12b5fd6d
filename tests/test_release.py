"""The install routes README promises, as a user takes them: one version everywhere (pyproject,
`rankcheck --version`, CHANGELOG.md, the tag README's git URLs and pre-commit `rev:` name), a
valid pre-commit manifest and README snippet, and a build that pip accepts from a git URL at the
release tag, whose wheel runs on its own."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from rankcheck import __version__, _toml

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
CHANGELOG = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
PRE_COMMIT = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))
TAG = f"v{__version__}"


def test_one_version_in_pyproject_the_package_and_the_changelog() -> None:
    project = _toml.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == __version__
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", CHANGELOG, flags=re.M)
    assert releases and releases[0][0] == __version__, releases


def test_changelog_keeps_a_changelog() -> None:
    assert CHANGELOG.startswith("# Changelog\n") and "keepachangelog.com" in CHANGELOG
    headings = re.findall(r"^## (.*)$", CHANGELOG, flags=re.M)
    assert headings[0] == "[Unreleased]"
    kinds = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
    assert set(re.findall(r"^### (.*)$", CHANGELOG, flags=re.M)) <= kinds
    for name in re.findall(r"^## \[([^\]]+)\]", CHANGELOG, flags=re.M):  # every linked heading has its link
        assert re.search(rf"^\[{re.escape(name)}\]: https://", CHANGELOG, flags=re.M), name


def test_readme_names_the_release_tag_and_no_pypi_release() -> None:
    revs = re.findall(r"^\s*rev: (\S+)", README, flags=re.M)
    assert revs == [TAG]
    urls = re.findall(r"git\+https://github\.com/rankcheck/rankcheck@(\S+?)'", README)
    assert urls and set(urls) == {TAG}
    assert not re.search(r"pip install rankcheck\b(?!` finds nothing)", README)
    assert not re.search(r"pip install 'rankcheck\[\w+\]'", README)


@pytest.mark.slow
@pytest.mark.skipif(not Path(PRE_COMMIT).is_file(), reason="pre-commit is not installed")
def test_pre_commit_accepts_the_manifest_and_readmes_config(tmp_path: Path) -> None:
    manifest = subprocess.run([PRE_COMMIT, "validate-manifest", str(REPO / ".pre-commit-hooks.yaml")], capture_output=True, text=True)
    assert manifest.returncode == 0, manifest.stdout + manifest.stderr
    (snippet,) = [block for block in re.findall(r"```yaml\n(.*?)```", README, flags=re.S) if "pre-commit-config" in block]
    config = tmp_path / ".pre-commit-config.yaml"
    config.write_text(snippet)
    checked = subprocess.run([PRE_COMMIT, "validate-config", str(config)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert yaml.safe_load(snippet)["repos"][0]["hooks"][0]["id"] == "rankcheck"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_pip_builds_the_git_url_at_the_tag_and_the_wheel_runs_alone(tmp_path: Path) -> None:
    """README's `pip install 'rankcheck @ git+https://...@vX.Y.Z'`, with a clone of this
    repository's committed HEAD tagged as the lead tags the release."""
    clone = tmp_path / "rankcheck"
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, env=env)
    # The clone has the release tag once it is made; before that, tag its HEAD as the release will be.
    tagged = subprocess.run(["git", "-C", str(clone), "rev-parse", "-q", "--verify", f"refs/tags/{TAG}"], capture_output=True, env=env)
    if tagged.returncode:
        subprocess.run(["git", "-C", str(clone), "tag", "-a", TAG, "-m", f"rankcheck {__version__}"], check=True, env=env)
    wheels = tmp_path / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), f"git+file://{clone}@{TAG}"],
        capture_output=True, text=True, env=env, timeout=600,
    )
    if built.returncode and ("Could not find a version" in built.stderr or "Failed to establish" in built.stderr):
        pytest.skip("pip could not fetch the build backend (no package index)")
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = wheels.glob("rankcheck-*.whl")
    assert wheel.name.startswith(f"rankcheck-{__version__}-py3-none-any")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("rankcheck/py.typed", "rankcheck/rules/codes.toml", "rankcheck/rules/RC101.md",
                   "rankcheck/report/rankcheck-json.schema.json", "rankcheck/integrations/lsp_documents.py"):
        assert needed in names, needed
    # Installed alone (its dependencies from this environment), away from the checkout.
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)], check=True,
                   capture_output=True, env=env, timeout=300)
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text("import torch.distributed as dist\n\n\ndef step(t):\n    if dist.get_rank() == 0:\n        dist.all_reduce(t)\n")
    alone = dict(env, PYTHONPATH=str(target))
    version = subprocess.run([sys.executable, "-m", "rankcheck", "--version"], cwd=project, capture_output=True, text=True, env=alone)
    assert version.stdout == f"rankcheck {__version__}\n"
    check = subprocess.run([sys.executable, "-m", "rankcheck", "--format", "concise", "--no-cache", "train.py"], cwd=project,
                           capture_output=True, text=True, env=alone, timeout=120)
    assert check.returncode == 1 and check.stdout.startswith("train.py:6:9: RC101 "), check.stdout + check.stderr
    where = subprocess.run([sys.executable, "-c", "import rankcheck; print(rankcheck.__file__)"], cwd=project, capture_output=True,
                           text=True, env=alone)
    assert where.stdout.startswith(str(target)), where.stdout
