"""Bad configuration (issue 8): every wrong type for every `[tool.rankcheck]` key, unknown keys,
unknown codes, malformed TOML, and a pyproject.toml that cannot be read. Each names the file, the
key and what is expected, exits 2 without a traceback, and the rest of the run is still done with
the default configuration (the hazard is still reported).

The matrix runs the real CLI entry point in-process (`rankcheck.cli.main`, a hundred cases in a few
seconds); a few representative cases also run as a subprocess, the way users meet them."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from robust_support import HAZARD, HAZARD_LINE, HAZARD_NAME, assert_clean_exit, drop_dac_prefix, run_cli

from rankcheck.cli import main

HEADER = "[project]\nname = 'demo'\n\n[tool.rankcheck]\n"
KEY_LINE = 5  # the line of the key under test in HEADER + "key = value"

# What each key takes (the documented schema, README "Configuration").
KEY_KINDS: Dict[str, str] = {
    "select": "codes",
    "extend-select": "codes",
    "ignore": "codes",
    "exclude": "patterns",
    "extend-exclude": "patterns",
    "per-file-ignores": "code-table",
    "extra-collectives": "name-table",
    "extra-rank-sources": "name-table",
    "rank-zero-only-decorators": "patterns",
    "warn-unused-ignores": "bool",
    "report-tests": "bool",
}

# Every TOML value type (and the shapes of arrays and tables that go wrong).
TOML_VALUES: Dict[str, str] = {
    "string": '"RC1"',
    "integer": "3",
    "float": "1.5",
    "boolean": "true",
    "offset_datetime": "1979-05-27T07:32:00Z",
    "local_date": "1979-05-27",
    "local_time": "07:32:00",
    "empty_array": "[]",
    "array_of_integers": "[1, 2]",
    "array_of_booleans": "[true]",
    "array_of_arrays": '[["RC1"]]',
    "mixed_array": '["RC1", 3]',
    "array_of_tables": "[{ a = 1 }]",
    "empty_table": "{}",
    "table_of_strings": '{ a = "b" }',
    "table_of_integers": "{ a = 1 }",
}
VALID: Dict[str, set] = {
    "codes": {"empty_array"},
    "patterns": {"empty_array"},
    "code-table": {"empty_table"},
    "name-table": {"empty_array", "empty_table", "table_of_strings"},
    "bool": {"boolean"},
}
WRONG_CASES: List[Tuple[str, str]] = [
    (key, value) for key, kind in KEY_KINDS.items() for value in TOML_VALUES if value not in VALID[kind]
]


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / HAZARD_NAME).write_text(HAZARD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run_main(capsys, *args: str) -> Tuple[int, str, str]:
    code = main(["--no-cache", "--format", "concise", *args, "."])
    out, err = capsys.readouterr()
    return code, out, err


RC002_LINE = re.compile(r"^pyproject\.toml:(\d+):(\d+): RC002 (.*)$")


def _rc002(out: str) -> List[Tuple[int, int, str]]:
    return [(int(m.group(1)), int(m.group(2)), m.group(3)) for m in map(RC002_LINE.match, out.splitlines()) if m]


def _assert_config_error(code: int, out: str, err: str) -> Tuple[int, int, str]:
    assert code == 2, (code, out, err)
    assert "Traceback" not in err and "internal error" not in err, err
    errors = _rc002(out)
    assert len(errors) == 1, out
    # The run goes on with the default configuration: the hazard is still reported.
    assert f"{HAZARD_NAME}:{HAZARD_LINE}:9: RC101 " in out, out
    return errors[0]


@pytest.mark.parametrize("key, value", WRONG_CASES, ids=[f"{k}={v}" for k, v in WRONG_CASES])
def test_wrong_type_names_file_key_and_expectation(project: Path, capsys, key: str, value: str) -> None:
    (project / "pyproject.toml").write_text(HEADER + f"{key} = {TOML_VALUES[value]}\n")
    line, _column, message = _assert_config_error(*_run_main(capsys))
    assert "pyproject.toml" in message
    assert f"tool.rankcheck.{key}" in message, message
    assert "must be" in message, message  # what is expected
    if f"tool.rankcheck.{key}." not in message:  # an entry inside a table: see test_rc002_points_at_the_offending_line
        assert line == KEY_LINE, (line, message)


@pytest.mark.parametrize("key, kind", sorted(KEY_KINDS.items()))
def test_valid_values_are_accepted(project: Path, capsys, key: str, kind: str) -> None:
    # The other side of the matrix: the test is not passing because everything is rejected.
    for value in sorted(VALID[kind]):
        (project / "pyproject.toml").write_text(HEADER + f"{key} = {TOML_VALUES[value]}\n")
        code, out, err = _run_main(capsys)
        assert code in (0, 1) and not _rc002(out) and not err, (key, value, out, err)  # `select = []` selects nothing


def test_the_schema_here_covers_every_key_rankcheck_knows(project: Path, capsys) -> None:
    (project / "pyproject.toml").write_text(HEADER + "no-such-key = 1\n")
    _, _, message = _assert_config_error(*_run_main(capsys))
    known = message.split("known keys:", 1)[1]
    assert {k.strip() for k in known.split(",")} == set(KEY_KINDS), message


@pytest.mark.parametrize("key", ["selct", "Select", "extend_select", "per_file_ignores", "exclude-dirs", "rankcheck"])
def test_unknown_key_names_it_and_lists_the_known_ones(project: Path, capsys, key: str) -> None:
    (project / "pyproject.toml").write_text(HEADER + f'{key} = ["RC1"]\n')
    line, _, message = _assert_config_error(*_run_main(capsys))
    assert f"unknown key `tool.rankcheck.{key}`" in message
    assert "known keys:" in message and "extend-select" in message
    assert line == KEY_LINE


@pytest.mark.parametrize(
    "body, key, code",
    [
        ('select = ["RC999"]', "select", "RC999"),
        ('select = ["rc101"]', "select", "rc101"),
        ('select = [""]', "select", ""),
        ('extend-select = ["XYZ1"]', "extend-select", "XYZ1"),
        ('ignore = ["RC1O1"]', "ignore", "RC1O1"),  # a letter O
        ('per-file-ignores = { "tests/*" = ["RC99"] }', "per-file-ignores", "RC99"),
    ],
)
def test_unknown_rule_code_is_named(project: Path, capsys, body: str, key: str, code: str) -> None:
    (project / "pyproject.toml").write_text(HEADER + body + "\n")
    _, _, message = _assert_config_error(*_run_main(capsys))
    assert f"tool.rankcheck.{key}" in message
    assert f"unknown rule code {code!r}" in message, message


MALFORMED_TOML = {
    "unclosed-header": ("[tool.rankcheck\nselect = []\n", 1),
    "unclosed-array": ("[tool.rankcheck]\nselect = [\n", 3),
    "missing-value": ("[tool.rankcheck]\nselect =\n", 2),
    "duplicate-key": ("[tool.rankcheck]\nselect = ['RC1']\nselect = ['RC1']\n", 3),
    "duplicate-table": ("[tool.rankcheck]\nselect = ['RC1']\n[tool.rankcheck]\nignore = []\n", 3),
    "bad-escape": ('[tool.rankcheck]\nselect = ["RC\\q"]\n', 2),
    "nul": ("[tool.rankcheck]\nselect = ['RC1\x00']\n", 2),
    "trailing-garbage": ("[tool.rankcheck]\nselect = ['RC1'] extra\n", 2),
    "missing-key": ("[tool.rankcheck]\n= 1\n", 2),
}


@pytest.mark.parametrize("name", sorted(MALFORMED_TOML))
def test_malformed_toml_is_rc002(project: Path, capsys, name: str) -> None:
    text, where = MALFORMED_TOML[name]
    (project / "pyproject.toml").write_text(text)
    _, column, message = _assert_config_error(*_run_main(capsys))
    assert "invalid TOML" in message and "pyproject.toml" in message, message
    assert f"line {where}" in message or "end of document" in message, message  # the position, in words at least
    assert column >= 1


@pytest.mark.parametrize("name", sorted(n for n, (_, where) in MALFORMED_TOML.items() if where != 1))
def test_malformed_toml_rc002_is_located_at_the_parser_position(project: Path, capsys, name: str) -> None:
    text, where = MALFORMED_TOML[name]
    (project / "pyproject.toml").write_text(text)
    line, _, _ = _assert_config_error(*_run_main(capsys))
    assert line == where


def test_non_utf8_pyproject_is_rc002(project: Path, capsys) -> None:
    (project / "pyproject.toml").write_bytes(HEADER.encode() + b"select = ['\xff']\n")
    _, _, message = _assert_config_error(*_run_main(capsys))
    assert "pyproject.toml" in message and "cannot read" in message, message


def test_bom_in_pyproject_is_rc002_or_accepted(project: Path, capsys) -> None:
    # tomllib (like pip) rejects a BOM; either a clear RC002 or reading the file is fine.
    (project / "pyproject.toml").write_text("\ufeff" + HEADER + 'select = ["RC1"]\n')
    code, out, err = _run_main(capsys)
    assert "Traceback" not in err and "internal error" not in err
    assert code in (1, 2) and f"{HAZARD_NAME}:{HAZARD_LINE}:9: RC101 " in out


@pytest.mark.parametrize("text", ["[tool]\nrankcheck = 3\n", "[[tool.rankcheck]]\nselect = []\n", "[tool]\nrankcheck = ['RC1']\n"])
def test_tool_rankcheck_that_is_not_a_table(project: Path, capsys, text: str) -> None:
    (project / "pyproject.toml").write_text(text)
    _, _, message = _assert_config_error(*_run_main(capsys))
    assert "`tool.rankcheck` must be a table" in message


@pytest.mark.parametrize("value", ["[" * 5000 + "]" * 5000, "{ a = " * 3000 + "1" + " }" * 3000])
def test_deeply_nested_toml_is_rc002(project: Path, capsys, value: str) -> None:
    (project / "pyproject.toml").write_text(HEADER + f"select = {value}\n")
    _assert_config_error(*_run_main(capsys))


@pytest.mark.parametrize("key", ["exclude", "extend-exclude"])
@pytest.mark.parametrize("pattern", ["[]", "[z-a]"])
def test_invalid_glob_pattern_is_rc002(project: Path, capsys, key: str, pattern: str) -> None:
    (project / "pyproject.toml").write_text(HEADER + f"{key} = [{pattern!r}]\n")
    _, _, message = _assert_config_error(*_run_main(capsys))
    assert f"tool.rankcheck.{key}" in message


@pytest.mark.parametrize(
    "text, line",
    [
        (HEADER + 'per-file-ignores = { "*.py" = "RC101" }\n', KEY_LINE),
        ("[project]\nname = 'demo'\n\n[tool]\nrankcheck.select = 3\n", 5),
    ],
    ids=["per-file-ignores-entry", "dotted-key"],
)
def test_rc002_points_at_the_offending_line(project: Path, capsys, text: str, line: int) -> None:
    (project / "pyproject.toml").write_text(text)
    got, _, _ = _assert_config_error(*_run_main(capsys))
    assert got == line


# ------------------------------------------------------------------------------------------------
# pyproject.toml that cannot be read, and the user's view through a subprocess


def _assert_cli_config_error(run, words: str) -> None:
    assert_clean_exit(run, allowed=(2,))
    lines = [line for line in run.stdout.splitlines() if " RC002 " in line]
    assert len(lines) == 1 and lines[0].startswith("pyproject.toml:"), run.describe()
    assert "pyproject.toml" in lines[0].split(" RC002 ", 1)[1] and words in lines[0], lines
    assert f"{HAZARD_NAME}:{HAZARD_LINE}:9: RC101 " in run.stdout


def test_wrong_type_through_the_cli(tmp_path: Path) -> None:
    (tmp_path / HAZARD_NAME).write_text(HAZARD)
    (tmp_path / "pyproject.toml").write_text(HEADER + "per-file-ignores = 3\n")
    run = run_cli(["--no-cache", "--format", "concise", "."], tmp_path)
    _assert_cli_config_error(run, "`tool.rankcheck.per-file-ignores` must be a table")


def test_malformed_toml_through_the_cli(tmp_path: Path) -> None:
    (tmp_path / HAZARD_NAME).write_text(HAZARD)
    (tmp_path / "pyproject.toml").write_text("[tool.rankcheck\n")
    run = run_cli(["--no-cache", "--format", "concise", "."], tmp_path)
    _assert_cli_config_error(run, "invalid TOML")


def test_pyproject_that_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / HAZARD_NAME).write_text(HAZARD)
    (tmp_path / "pyproject.toml").mkdir()
    run = run_cli(["--no-cache", "--format", "concise", "."], tmp_path)
    _assert_cli_config_error(run, "cannot read")


def test_unreadable_pyproject(tmp_path: Path) -> None:
    prefix = drop_dac_prefix()
    (tmp_path / HAZARD_NAME).write_text(HAZARD)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(HEADER + 'select = ["RC1"]\n')
    os.chmod(pyproject, 0)
    try:
        run = run_cli(["--no-cache", "--format", "concise", "."], tmp_path, prefix=prefix)
    finally:
        os.chmod(pyproject, 0o644)
    _assert_cli_config_error(run, "ermission denied")


def test_pyproject_that_is_a_symlink_loop(tmp_path: Path) -> None:
    (tmp_path / HAZARD_NAME).write_text(HAZARD)
    (tmp_path / "pyproject.toml").symlink_to("pyproject.toml")
    run = run_cli(["--no-cache", "--format", "concise", "."], tmp_path)
    _assert_cli_config_error(run, "cannot read")


def test_pyproject_that_is_a_fifo(tmp_path: Path) -> None:
    (tmp_path / HAZARD_NAME).write_text(HAZARD)
    os.mkfifo(tmp_path / "pyproject.toml")
    run = run_cli(["--no-cache", "--format", "concise", "."], tmp_path, timeout=10)
    assert_clean_exit(run, allowed=(1, 2))
    assert f"{HAZARD_NAME}:{HAZARD_LINE}:9: RC101 " in run.stdout
