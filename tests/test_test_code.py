"""Test code is read for context and its findings are held back unless asked for: a test's assert
can hang only when the test already fails, and a user runs rankcheck for the training code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rankcheck.api import run_check
from rankcheck.config import Config

HAZARD = "import torch.distributed as dist\n\n\ndef step(t):\n    if dist.get_rank() == 0:\n        dist.all_reduce(t)\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "train.py").write_text(HAZARD)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_train.py").write_text(HAZARD)
    (tmp_path / "check_helpers.py").write_text("import pytest\n\n" + HAZARD)  # imports pytest: test code
    (tmp_path / "model_test.py").write_text(HAZARD)
    return tmp_path


def _reported(result) -> set:
    return {Path(f.location.path).name for f in result.findings}


def test_findings_in_test_code_are_held_back_and_counted(project: Path) -> None:
    result = run_check([project], root=project)
    assert _reported(result) == {"train.py"}
    assert result.hidden_in_tests == 3


def test_report_tests_reports_them(project: Path) -> None:
    assert _reported(run_check([project], root=project, report_tests=True)) == {"train.py", "test_train.py", "check_helpers.py", "model_test.py"}
    config = Config(report_tests=True)
    assert len(_reported(run_check([project], root=project, config=config))) == 4


def test_a_test_file_named_on_the_command_line_is_reported(project: Path) -> None:
    result = run_check([project / "tests" / "test_train.py"], root=project)
    assert _reported(result) == {"test_train.py"}


def test_the_cli_says_what_it_held_back(project: Path) -> None:
    env = dict(os.environ, NO_PROGRESS="1")
    run = subprocess.run([sys.executable, "-m", "rankcheck", "--no-cache", "."], cwd=project, capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 1, run.stderr
    assert "train.py:6:9: RC101" in run.stdout and "test_train.py" not in run.stdout
    assert "3 findings in test code not shown (--report-tests" in run.stderr
    both = subprocess.run([sys.executable, "-m", "rankcheck", "--no-cache", "--report-tests", "."], cwd=project, capture_output=True, text=True, env=env, timeout=120)
    assert "tests/test_train.py:6:9: RC101" in both.stdout and "not shown" not in both.stderr
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n[tool.rankcheck]\nreport-tests = true\n")
    configured = subprocess.run([sys.executable, "-m", "rankcheck", "--no-cache", "."], cwd=project, capture_output=True, text=True, env=env, timeout=120)
    assert "tests/test_train.py:6:9: RC101" in configured.stdout


def test_a_module_that_only_uses_unittest_mock_is_training_code(tmp_path: Path) -> None:
    # sglang's and vLLM's shared-memory node probe patches the resource tracker with
    # `unittest.mock.patch`: production code, reported; `import unittest` still marks a test.
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "node_probe.py").write_text("from unittest.mock import patch\n\n" + HAZARD)
    (tmp_path / "probe_cases.py").write_text("import unittest\nfrom unittest.mock import patch\n\n" + HAZARD)
    result = run_check([tmp_path], root=tmp_path)
    assert _reported(result) == {"node_probe.py"}
    assert result.hidden_in_tests == 1


def test_a_module_named_like_a_test_that_the_training_code_imports_is_training_code(tmp_path: Path) -> None:
    # mmf's `common/test_reporter.py` writes the predictions of its test split; its data modules
    # import it. A helper named so that only tests import, or one with test functions, stays test code.
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "__init__.py").write_text("")
    (tmp_path / "common" / "test_reporter.py").write_text(HAZARD)
    (tmp_path / "datamodule.py").write_text("from common.test_reporter import step\n\n\ndef run(t):\n    step(t)\n")
    (tmp_path / "test_utils.py").write_text(HAZARD)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_run.py").write_text("from test_utils import step\n\n\ndef test_step():\n    step(None)\n")
    (tmp_path / "test_step.py").write_text(HAZARD + "\n\ndef test_step():\n    step(None)\n")
    (tmp_path / "step_check.py").write_text("from test_step import step\n")
    result = run_check([tmp_path], root=tmp_path)
    assert _reported(result) == {"test_reporter.py"}
    assert result.hidden_in_tests == 2
