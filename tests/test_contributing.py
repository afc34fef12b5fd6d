"""CONTRIBUTING.md's code map names every module, and the rule scaffold it describes works."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
GUIDE = REPO / "CONTRIBUTING.md"


def _mapped() -> set:
    return set(re.findall(r"^\| `(rankcheck/[\w/]+(?:\.py|/))` \|", GUIDE.read_text(encoding="utf-8"), re.M))


def test_the_code_map_names_every_module_and_package_and_nothing_else() -> None:
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "rankcheck").rglob("*.py") if p.name != "__init__.py"}
    packages = {p.parent.relative_to(REPO).as_posix() + "/" for p in (REPO / "rankcheck").rglob("__init__.py")}
    packages.discard("rankcheck/")
    mapped = _mapped()
    assert modules | packages <= mapped, sorted((modules | packages) - mapped)
    assert mapped <= modules | packages, sorted(mapped - (modules | packages))


def test_every_package_is_installed() -> None:
    """pyproject.toml lists the packages setuptools installs: a new one must be added there."""
    listed = set(re.findall(r'^\s*"(rankcheck[\w.]*)",?$', (REPO / "pyproject.toml").read_text(encoding="utf-8"), re.M))
    packages = {p.parent.relative_to(REPO).as_posix().replace("/", ".") for p in (REPO / "rankcheck").rglob("__init__.py")}
    assert packages <= listed, sorted(packages - listed)


def test_the_rule_scaffold_creates_a_registered_rule_with_page_and_cases(tmp_path: Path) -> None:
    for part in ("rankcheck", "rules"):
        shutil.copytree(REPO / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "corpus" / "core").mkdir(parents=True)
    run = subprocess.run(
        [sys.executable, "-m", "rankcheck.devtools.new_rule", "RC199", "collective-in-teardown", "A collective in a teardown hook"],
        cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": str(tmp_path), "PATH": ""}, timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert "rankcheck/checks/collective_in_teardown.py" in run.stdout
    probe = (
        "from rankcheck.checks import RULES; from rankcheck.rules_meta import get_rule; "
        "r = get_rule('RC199'); print(RULES['RC199'].__name__, r.name, r.family, sorted(r.messages)); print(r.doc().splitlines()[0])"
    )
    shown = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": str(tmp_path)}, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        "rankcheck.checks.collective_in_teardown collective-in-teardown hang ['default']",
        "# RC199 collective-in-teardown",
    ]
    buggy = (tmp_path / "corpus" / "core" / "rc199_collective_in_teardown.py").read_text(encoding="utf-8")
    assert "# expect: RC199" in buggy
    assert "expect:" not in (tmp_path / "corpus" / "core" / "safe_collective_in_teardown.py").read_text(encoding="utf-8")
    again = subprocess.run(
        [sys.executable, "-m", "rankcheck.devtools.new_rule", "RC199", "other-name", "x"],
        cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": str(tmp_path)}, timeout=60,
    )
    assert again.returncode == 2 and "already in rules/codes.toml" in again.stderr


@pytest.mark.parametrize("code, name", [("RC1", "x"), ("RC199", "Not_Kebab")])
def test_the_scaffold_refuses_a_malformed_code_or_name(tmp_path: Path, code: str, name: str) -> None:
    from rankcheck.devtools.new_rule import scaffold

    shutil.copytree(REPO / "rules", tmp_path / "rules")
    with pytest.raises(ValueError):
        scaffold(tmp_path, code, name, "summary")
