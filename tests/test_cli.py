"""The CLI as users run it: a subprocess, exit codes, formats, config, suppressions, bad files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

HAZARD = textwrap.dedent(
    """\
    import torch.distributed as dist


    def step(t):
        rank = dist.get_rank()
        if rank == 0:
            dist.all_reduce(t)
    """
)
SAFE = textwrap.dedent(
    """\
    import torch.distributed as dist


    def step(t):
        dist.all_reduce(t)
        if dist.get_rank() == 0:
            print(t)
    """
)


def run(args, cwd: Path, env=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "rankcheck", *args], cwd=cwd, capture_output=True, text=True, env=full_env, timeout=120
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    return tmp_path


def test_finding_first_line_is_ruff_concise_form_and_exit_1(project: Path) -> None:
    (project / "train.py").write_text(HAZARD)
    proc = run(["train.py"], project)
    assert proc.returncode == 1, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("train.py:7:9: RC101 collective reached on some ranks only: `dist.all_reduce` runs only on ranks where `rank == 0` is true")
    assert "  guard: train.py:6:5  `if rank == 0:`  (rank comes from `dist.get_rank()` at train.py:5)" in proc.stdout
    assert "  path:  train.py:7 dist.all_reduce" in proc.stdout


def test_rank_source_in_a_helper_shows_the_calls_that_returned_it(project: Path) -> None:
    """A rank read in another module reaches the guard through the helpers that return it: the
    evidence names each call on the way, in text, JSON and SARIF."""
    (project / "dist_utils.py").write_text(
        "import os\n\n\ndef global_rank() -> int:\n    return int(os.environ['RANK'])\n\n\n"
        "def is_main() -> bool:\n    return global_rank() == 0\n"
    )
    (project / "train.py").write_text(
        "import torch.distributed as dist\n\nfrom dist_utils import is_main\n\n\n"
        "def step(t):\n    if is_main():\n        dist.all_reduce(t)\n"
    )
    proc = run(["train.py", "dist_utils.py"], project)
    assert '(rank comes from `os.environ["RANK"]` at dist_utils.py:5)' in proc.stdout, proc.stdout
    assert "  via:   returned by `global_rank()` at dist_utils.py:9 -> returned by `is_main()` at train.py:7" in proc.stdout
    (finding,) = json.loads(run(["--format", "json", "train.py", "dist_utils.py"], project).stdout)["findings"]
    steps = finding["guard"]["source"]["steps"]
    assert [(s["text"], s["location"]["path"], s["location"]["line"]) for s in steps] == [
        ("returned by `global_rank()`", "dist_utils.py", 9),
        ("returned by `is_main()`", "train.py", 7),
    ]
    (result,) = json.loads(run(["--format", "sarif", "train.py", "dist_utils.py"], project).stdout)["runs"][0]["results"]
    assert [r["message"]["text"] for r in result["relatedLocations"]][-2:] == ["then returned by `global_rank()`", "then returned by `is_main()`"]


def test_rank_kept_on_the_object_shows_the_method_that_stored_it(project: Path) -> None:
    (project / "worker.py").write_text(
        "import torch.distributed as dist\n\n\nclass Worker:\n    def __init__(self):\n"
        "        self.rank = dist.get_rank()\n\n    def step(self, t):\n        if self.rank == 0:\n"
        "            dist.all_reduce(t)\n"
    )
    proc = run(["worker.py"], project)
    assert "  via:   stored in `self.rank` by `__init__()` at worker.py:5" in proc.stdout, proc.stdout


def test_guard_is_quoted_as_written(project: Path) -> None:
    """An `assert` guard reads as the statement does (no colon: no block follows it)."""
    (project / "train.py").write_text(
        "import torch.distributed as dist\n\n\ndef step(t):\n"
        "    assert dist.get_rank() != 0, 'rank 0 only logs'\n    dist.all_reduce(t)\n"
    )
    assert json.loads(run(["--format", "json", "train.py"], project).stdout)["findings"] == []  # RC108 is off by default
    proc = run(["--format", "json", "--extend-select", "RC108", "train.py"], project)
    (finding,) = json.loads(proc.stdout)["findings"]
    assert finding["code"] == "RC108" and finding["guard"]["text"] == "assert dist.get_rank() != 0"
    assert finding["message"].startswith("rank dies before a collective: `assert dist.get_rank() != 0` on ranks where")


def test_clean_code_exits_0_and_says_all_checks_passed(project: Path) -> None:
    (project / "train.py").write_text(SAFE)
    proc = run(["train.py"], project)
    assert proc.returncode == 0
    assert proc.stdout == "All checks passed!\n" and proc.stderr == ""


def test_exit_zero_and_concise_and_statistics(project: Path) -> None:
    (project / "train.py").write_text(HAZARD)
    proc = run(["--exit-zero", "--format", "concise", "--statistics", "."], project)
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("train.py:7:9: RC101 ")
    assert not any(line.startswith("  guard") for line in lines)
    assert "    1  RC101  collective-under-rank-branch" in lines


def test_check_subcommand_and_module_entry_agree(project: Path) -> None:
    (project / "train.py").write_text(HAZARD)
    a = run(["check", "train.py"], project)
    b = run(["train.py"], project)
    assert a.stdout == b.stdout and a.returncode == b.returncode == 1


def test_json_format_is_documented_shape(project: Path) -> None:
    (project / "train.py").write_text(HAZARD)
    proc = run(["--format", "json", "train.py"], project)
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["version"] == 1 and doc["tool"] == "rankcheck" and doc["files_checked"] == 1
    (finding,) = doc["findings"]
    assert finding["code"] == "RC101" and finding["name"] == "collective-under-rank-branch"
    assert finding["location"]["path"] == "train.py"
    assert (finding["location"]["line"], finding["location"]["column"]) == (7, 9)
    assert finding["location"]["end_line"] == 7 and finding["location"]["end_column"] > 9
    assert finding["guard"]["text"] == "if rank == 0:"
    assert finding["guard"]["source"]["text"] == "dist.get_rank()"
    assert finding["guard"]["source"]["location"]["line"] == 5
    assert [step["callee"] for step in finding["chain"]] == ["dist.all_reduce"]
    assert finding["severity"] == "error" and finding["collective"] == "all_reduce"


def test_json_lines_and_output_file(project: Path) -> None:
    (project / "train.py").write_text(HAZARD)
    proc = run(["--format", "json-lines", "--output", "out/findings.jsonl", "train.py"], project)
    assert proc.returncode == 1 and proc.stdout == ""
    lines = (project / "out" / "findings.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["code"] == "RC101"


def test_two_formats_from_one_run(project: Path) -> None:
    (project / "train.py").write_text(HAZARD)
    proc = run(["--format", "concise", "--format", "json:report.json", "train.py"], project)
    assert proc.returncode == 1
    assert proc.stdout.startswith("train.py:7:9: RC101")
    assert json.loads((project / "report.json").read_text())["findings"][0]["code"] == "RC101"


def test_unparsable_file_is_a_diagnostic_and_the_rest_is_analysed(project: Path) -> None:
    (project / "broken.py").write_text("def f(:\n    pass\n")
    (project / "latin.py").write_bytes(b"x = '\xe9t\xe9'\n")
    (project / "train.py").write_text(HAZARD)
    proc = run(["."], project)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "broken.py:1:7: RC001 syntax error" in proc.stdout
    assert "latin.py:1:6: RC001 file is not valid utf-8" in proc.stdout
    assert "train.py:7:9: RC101" in proc.stdout


# Each level calls the one below ten times: a class of ranks of `main` issues over 10,000 events.
TOO_LARGE = textwrap.dedent(
    """\
    import torch.distributed as dist


    def step():
        dist.barrier(); dist.barrier(); dist.barrier(); dist.barrier(); dist.barrier()
        dist.barrier(); dist.barrier(); dist.barrier(); dist.barrier(); dist.barrier()


    def epoch():
        step(); step(); step(); step(); step(); step(); step(); step(); step(); step()


    def stage():
        epoch(); epoch(); epoch(); epoch(); epoch(); epoch(); epoch(); epoch(); epoch(); epoch()


    def main():
        if dist.get_rank() == 0:
            dist.barrier()
        stage(); stage(); stage(); stage(); stage(); stage(); stage(); stage(); stage(); stage()


    def small():
        if dist.get_rank() == 0:
            dist.barrier()
    """
)


def test_a_function_too_large_to_compare_is_named_not_passed_in_silence(project: Path) -> None:
    (project / "train.py").write_text(TOO_LARGE)
    proc = run(["train.py"], project)
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if ": RC" in line]
    # `main`'s own rank branch is past the limit; `small`'s, the same, is still found.
    assert lines[0].startswith("train.py:17:5: RC005 too large to compare: a class of ranks of `main` issues more than 4000")
    assert any(line.startswith("train.py:25:9: RC101") for line in lines), lines
    assert not any(line.startswith("train.py:19:") for line in lines), lines
    (project / "train.py").write_text(TOO_LARGE.replace("def main():", "def main():  # rankcheck: ignore[RC005]"))
    proc = run(["train.py"], project)
    assert not any(": RC005" in line for line in proc.stdout.splitlines()), proc.stdout
    # In test code it is hidden with the hazard findings it stands in for, and shown on request.
    (project / "train.py").unlink()
    (project / "tests").mkdir()
    (project / "tests" / "test_train.py").write_text(TOO_LARGE)
    proc = run(["."], project)
    assert proc.returncode == 0 and "All checks passed!" in proc.stdout, proc.stdout
    assert "2 findings in test code not shown" in proc.stderr, proc.stderr
    proc = run([".", "--report-tests"], project)
    assert "tests/test_train.py:17:5: RC005" in proc.stdout, proc.stdout


def test_missing_path_is_reported(project: Path) -> None:
    proc = run(["nope.py"], project)
    assert proc.returncode == 1
    assert "RC001 no such file or directory: nope.py" in proc.stdout


def test_noqa_and_rankcheck_ignore_suppress(project: Path) -> None:
    (project / "a.py").write_text(HAZARD.replace("dist.all_reduce(t)", "dist.all_reduce(t)  # noqa: RC101"))
    (project / "b.py").write_text(HAZARD.replace("dist.all_reduce(t)", "dist.all_reduce(t)  # rankcheck: ignore[RC101]"))
    (project / "c.py").write_text(HAZARD.replace("dist.all_reduce(t)", "dist.all_reduce(t)  # rankcheck: ignore"))
    (project / "d.py").write_text(HAZARD.replace("dist.all_reduce(t)", "dist.all_reduce(t)  # noqa: RC102"))
    proc = run(["."], project)
    assert proc.returncode == 1
    reported = {line.split(":")[0] for line in proc.stdout.splitlines() if ": RC" in line}
    assert reported == {"d.py"}


@pytest.mark.slow
def test_unused_suppression_reported_on_request(project: Path) -> None:
    (project / "train.py").write_text(SAFE.replace("dist.all_reduce(t)", "dist.all_reduce(t)  # noqa: RC101"))
    quiet = run(["train.py"], project)
    assert quiet.returncode == 0 and quiet.stdout == "All checks passed!\n"
    loud = run(["--warn-unused-ignores", "train.py"], project)
    assert loud.returncode == 1
    assert "train.py:5:25: RC003 unused suppression `RC101`" in loud.stdout


@pytest.mark.slow
def test_select_ignore_and_per_file_ignores(project: Path) -> None:
    (project / "train.py").write_text(HAZARD)
    assert run(["--ignore", "RC101", "train.py"], project).returncode == 0
    assert run(["--select", "RC102", "train.py"], project).returncode == 0
    assert run(["--select", "RC1", "train.py"], project).returncode == 1
    (project / "pyproject.toml").write_text("[tool.rankcheck]\nper-file-ignores = { 'train.py' = ['RC1'] }\n")
    assert run(["train.py"], project).returncode == 0


def test_unknown_cli_code_is_usage_error(project: Path) -> None:
    proc = run(["--select", "RC999", "."], project)
    assert proc.returncode == 2
    assert "unknown rule code 'RC999'" in proc.stderr


@pytest.mark.parametrize(
    "body, key, expected",
    [
        ("selct = ['RC1']\n", "selct", "unknown key `tool.rankcheck.selct`"),
        ("select = 'RC1'\n", "select", "`tool.rankcheck.select` must be a list of rule codes"),
        ("ignore = ['RC9']\n", "ignore", "unknown rule code 'RC9'"),
        ("warn-unused-ignores = 'yes'\n", "warn-unused-ignores", "must be true or false"),
        ("extra-collectives = 3\n", "extra-collectives", "`tool.rankcheck.extra-collectives` must be"),
    ],
)
@pytest.mark.slow
def test_bad_config_names_file_and_key_and_exits_2(project: Path, body: str, key: str, expected: str) -> None:
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n\n[tool.rankcheck]\n" + body)
    (project / "train.py").write_text(HAZARD)
    proc = run(["train.py"], project)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    line = next(line for line in proc.stdout.splitlines() if "RC002" in line)
    assert line.startswith("pyproject.toml:5:1: RC002 ")
    assert "pyproject.toml" in line and expected in line
    # The rest of the work is still done, with the default configuration.
    assert "train.py:7:9: RC101" in proc.stdout


def test_malformed_toml_is_rc002_with_position(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.rankcheck\nselect = [\n")
    (project / "train.py").write_text(SAFE)
    proc = run(["train.py"], project)
    assert proc.returncode == 2
    assert "RC002" in proc.stdout and "invalid TOML" in proc.stdout


def test_extra_collectives_and_rank_sources_from_config(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        "[tool.rankcheck]\n"
        "extra-collectives = { 'mylib.comm.sync_all' = 'all_reduce' }\n"
        "extra-rank-sources = ['mylib.dist.my_rank']\n"
    )
    (project / "train.py").write_text(
        "from mylib.comm import sync_all\nfrom mylib.dist import my_rank\n\n\ndef step(t):\n"
        "    if my_rank() == 0:\n        sync_all(t)\n"
    )
    proc = run(["train.py"], project)
    assert proc.returncode == 1
    assert "train.py:7:9: RC101 collective reached on some ranks only: `sync_all` runs only on ranks where `my_rank() == 0` is true" in proc.stdout


@pytest.mark.slow
def test_context_from_unnamed_module(project: Path) -> None:
    """A pre-commit style run names one file; the collective sits in a module it did not name."""
    (project / "metrics.py").write_text("import torch.distributed as dist\n\n\ndef mean(t):\n    dist.all_reduce(t)\n    return t\n")
    (project / "train.py").write_text(
        "import torch.distributed as dist\nfrom metrics import mean\n\n\ndef log(t):\n    if dist.get_rank() == 0:\n        print(mean(t))\n"
    )
    proc = run(["train.py"], project)
    assert proc.returncode == 1
    assert "train.py:7:15: RC101 [*] collective reached on some ranks only: `mean()` (which reaches `dist.all_reduce`)" in proc.stdout  # [*]: it has a fix
    assert "path:  train.py:7 mean() -> metrics.py:5 dist.all_reduce" in proc.stdout
    assert "metrics.py:" not in proc.stdout.splitlines()[0]


def test_rule_command(project: Path) -> None:
    proc = run(["rule", "RC101"], project)
    assert proc.returncode == 0
    assert proc.stdout.startswith("# RC101 collective-under-rank-branch")
    assert "## Use instead" in proc.stdout
    listing = run(["rule", "--all"], project)
    assert listing.returncode == 0 and "RC102  rank-exit-before-collective" in listing.stdout
    assert run(["rule", "RC999"], project).returncode == 2


@pytest.mark.slow
def test_linter_runs_without_torch(project: Path) -> None:
    """The static analysis must not import torch: hide it and run the CLI in-process."""
    (project / "train.py").write_text(HAZARD)
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from rankcheck.cli import main\n"
        "rc = main(['train.py'])\n"
        "assert 'torch' not in [m for m in sys.modules if sys.modules[m] is not None], 'torch was imported'\n"
        "sys.exit(rc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "RC101" in proc.stdout


def test_version(project: Path) -> None:
    proc = run(["--version"], project)
    assert proc.returncode == 0 and proc.stdout.startswith("rankcheck ")


def test_paths_under_unrelated_directories_are_read_alone_with_a_message(tmp_path: Path) -> None:
    """`rankcheck check /var/tmp/a.py /tmp/b.py`: the paths share only the filesystem root, whose
    whole tree must not be read as the project (nor the cache written at its top)."""
    if not os.access("/var/tmp", os.W_OK) or os.path.commonpath(["/var/tmp", str(tmp_path.resolve())]) != "/":
        pytest.skip("needs a writable /var/tmp on another branch of the filesystem than the test's directory")
    top_cache = Path("/") / ".rankcheck_cache"
    had_top_cache = top_cache.exists()
    elsewhere = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        (elsewhere / "train.py").write_text(HAZARD)
        (tmp_path / "safe.py").write_text(SAFE)
        proc = run([str(elsewhere / "train.py"), str(tmp_path / "safe.py")], tmp_path)
        assert proc.returncode == 1, proc.stderr
        assert "share no directory below /; only they are read" in proc.stderr
        assert "pass --root DIR" in proc.stderr
        assert "train.py:7:9: RC101" in proc.stdout
        assert top_cache.exists() == had_top_cache
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)


HELPER_THAT_REDUCES = textwrap.dedent(
    """\
    import torch.distributed as dist


    def mean_over_ranks(t):
        dist.all_reduce(t)
        return t / dist.get_world_size()
    """
)

SCRIPT_USING_IT = textwrap.dedent(
    """\
    import torch
    import torch.distributed as dist

    from lib.metrics import mean_over_ranks


    def log_loss(loss):
        if dist.get_rank() == 0:
            print(mean_over_ranks(loss.detach()))
    """
)


@pytest.mark.parametrize("marker", ["setup.py", "setup.cfg", ".git"])
def test_checking_one_folder_of_a_project_without_pyproject_reads_the_modules_it_imports(tmp_path: Path, marker: str) -> None:
    # No pyproject.toml: the packaging file or the repository marks the top, so `apps/`'s import
    # of `lib/` is followed and the collective in it is found.
    if marker == ".git":
        (tmp_path / ".git").mkdir()
    else:
        (tmp_path / marker).write_text("")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text("")
    (tmp_path / "lib" / "metrics.py").write_text(HELPER_THAT_REDUCES)
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "train.py").write_text(SCRIPT_USING_IT)
    proc = run(["--no-cache", "apps"], tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith("apps/train.py:9:15: RC101"), proc.stdout
    assert "lib/metrics.py:5 dist.all_reduce" in proc.stdout


def test_a_pyproject_above_wins_over_a_nearer_setup_py(tmp_path: Path) -> None:
    # The project is the pyproject.toml's directory; a setup.py of one of its folders does not cut it.
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text("")
    (tmp_path / "lib" / "metrics.py").write_text(HELPER_THAT_REDUCES)
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "setup.py").write_text("")
    (tmp_path / "apps" / "train.py").write_text(SCRIPT_USING_IT)
    proc = run(["--no-cache", "apps"], tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "lib/metrics.py:5 dist.all_reduce" in proc.stdout
