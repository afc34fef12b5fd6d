"""Hostile project trees (issue 8): symlink loops, dangling links, unreadable files and directories,
special files, files that vanish during the run, odd file names, import cycles, recursion across
modules, very deep and very large trees. The run ends normally, says what it could not read, and
still reports the real hazard."""

from __future__ import annotations

import os
import textwrap
import threading
from pathlib import Path
from typing import List
from urllib.parse import quote

import pytest
from robust_support import (
    BIG_INPUT_ADDRESS_SPACE,
    BIG_INPUT_RSS_BYTES,
    BIG_INPUT_TIMEOUT_S,
    HAZARD,
    HAZARD_LINE,
    HAZARD_NAME,
    assert_clean_exit,
    drop_dac_prefix,
    hazard_reported,
    new_project,
    run_cli,
    slow,
)

import rankcheck.driver.run
from rankcheck.api import run_check


def _codes_at(findings, name: str) -> List[tuple]:
    return [(f.code, f.location.line) for f in findings if Path(f.location.path).name == name]


def _json_codes(run, name: str) -> List[tuple]:
    return [(f["code"], f["location"]["line"]) for f in run.findings() if Path(f["location"]["path"]).name == name]


def _cli_hazard(run) -> bool:
    return any(f["code"] == "RC101" and f["location"]["path"] == HAZARD_NAME and f["location"]["line"] == HAZARD_LINE for f in run.findings())


# ------------------------------------------------------------------------------------------------
# links and special files inside the tree


def test_symlink_loops_and_dangling_links_inside_the_tree(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    pkg = root / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "up").symlink_to("..")  # a directory loop: pkg/up/pkg/up/...
    (root / "self_dir").symlink_to("self_dir")
    (root / "loop_a.py").symlink_to("loop_b.py")
    (root / "loop_b.py").symlink_to("loop_a.py")
    (root / "dangling.py").symlink_to("nowhere.py")
    (root / "ok_link.py").symlink_to(HAZARD_NAME)
    run = run_cli(["--no-cache", "--format", "json", "."], root, timeout=60)
    assert_clean_exit(run, allowed=(1,))
    assert _cli_hazard(run), run.describe()
    hazards = [f for f in run.findings() if f["code"] == "RC101"]
    # The hazard once through its own name (and at most once more through the file link), never
    # once per trip around the directory loop.
    assert 1 <= len(hazards) <= 2, hazards
    assert all("up/" not in f["location"]["path"] for f in run.findings()), run.describe()


@pytest.mark.parametrize("name", ["loop_a.py", "self_dir"])
@pytest.mark.slow
def test_symlink_loop_named_on_the_command_line_is_a_diagnostic(tmp_path: Path, name: str) -> None:
    root = new_project(tmp_path)
    (root / "loop_a.py").symlink_to("loop_b.py")
    (root / "loop_b.py").symlink_to("loop_a.py")
    (root / "self_dir").symlink_to("self_dir")
    run = run_cli(["--no-cache", "--format", "json", name, HAZARD_NAME], root, timeout=60)
    assert_clean_exit(run, allowed=(1,))
    assert _cli_hazard(run)
    assert [code for code, _ in _json_codes(run, name)] == ["RC001"], run.describe()


def test_dangling_symlink_named_on_the_command_line_is_reported_under_its_own_name(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    (root / "dangling.py").symlink_to("nowhere.py")
    run = run_cli(["--no-cache", "--format", "json", "dangling.py", HAZARD_NAME], root, timeout=60)
    assert_clean_exit(run, allowed=(1,))
    paths = [f["location"]["path"] for f in run.findings() if f["code"] == "RC001"]
    assert paths == ["dangling.py"], run.describe()


def test_unreadable_special_file_in_the_tree_is_a_diagnostic(tmp_path: Path) -> None:
    # A regular-looking .py that fails to read even for root: /proc/self/mem gives EIO at offset 0.
    if not Path("/proc/self/mem").exists():
        pytest.skip("no /proc/self/mem on this system")
    root = new_project(tmp_path)
    (root / "mem.py").symlink_to("/proc/self/mem")
    run = run_cli(["--no-cache", "--format", "json", "."], root, timeout=60)
    assert_clean_exit(run, allowed=(1,))
    assert _cli_hazard(run)
    assert [code for code, _ in _json_codes(run, "mem.py")] == ["RC001"], run.describe()


def test_fifo_in_the_tree_is_not_opened(tmp_path: Path) -> None:
    # Opening a FIFO with no writer blocks forever: the walk must not read it.
    root = new_project(tmp_path)
    os.mkfifo(root / "pipe.py")
    run = run_cli(["--no-cache", "--format", "json", "."], root, timeout=60)
    assert_clean_exit(run, allowed=(1,))
    assert _cli_hazard(run)
    assert [code for code, _ in _json_codes(run, "pipe.py")] in ([], ["RC001"])


def test_fifo_named_on_the_command_line_is_a_diagnostic(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    os.mkfifo(root / "pipe.py")
    run = run_cli(["--no-cache", "--format", "json", "pipe.py", HAZARD_NAME], root, timeout=10)
    assert_clean_exit(run, allowed=(1,))
    assert _cli_hazard(run)
    assert [code for code, _ in _json_codes(run, "pipe.py")] == ["RC001"]


@pytest.mark.slow
def test_directory_named_like_a_module(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    (root / "weird.py").mkdir()
    (root / "weird.py" / "inner.py").write_text(HAZARD)
    for args in (["."], ["weird.py", HAZARD_NAME]):
        run = run_cli(["--no-cache", "--format", "json", *args], root, timeout=60)
        assert_clean_exit(run, allowed=(1,))
        assert _cli_hazard(run)
        assert ("RC101", HAZARD_LINE) in _json_codes(run, "inner.py"), run.describe()


# ------------------------------------------------------------------------------------------------
# permissions (root ignores chmod 000: the CLI then runs without CAP_DAC_OVERRIDE through setpriv)


@pytest.fixture
def locked_tree(tmp_path: Path):
    root = new_project(tmp_path)
    (root / "secret.py").write_text(HAZARD)
    (root / "locked").mkdir()
    (root / "locked" / "inside.py").write_text(HAZARD)
    os.chmod(root / "secret.py", 0)
    os.chmod(root / "locked", 0)
    yield root
    os.chmod(root / "locked", 0o755)
    os.chmod(root / "secret.py", 0o644)


def test_unreadable_file_is_a_diagnostic_and_the_rest_is_analysed(locked_tree: Path) -> None:
    prefix = drop_dac_prefix()
    run = run_cli(["--no-cache", "--format", "json", "."], locked_tree, timeout=60, prefix=prefix)
    assert_clean_exit(run, allowed=(1,))
    assert _cli_hazard(run)
    secret = [f for f in run.findings() if f["location"]["path"] == "secret.py"]
    assert [f["code"] for f in secret] == ["RC001"], run.describe()
    assert "permission denied" in secret[0]["message"].lower()


@pytest.mark.slow
def test_unreadable_file_named_on_the_command_line(locked_tree: Path) -> None:
    prefix = drop_dac_prefix()
    run = run_cli(["--no-cache", "--format", "json", "secret.py", HAZARD_NAME], locked_tree, timeout=60, prefix=prefix)
    assert_clean_exit(run, allowed=(1,))
    assert _cli_hazard(run)
    assert [code for code, _ in _json_codes(run, "secret.py")] == ["RC001"]


def test_unreadable_directory_in_the_tree_is_reported(locked_tree: Path) -> None:
    prefix = drop_dac_prefix()
    run = run_cli(["--no-cache", "--format", "json", "."], locked_tree, timeout=60, prefix=prefix)
    assert_clean_exit(run, allowed=(1,))
    assert _cli_hazard(run)
    assert any(f["code"] == "RC001" and "locked" in f["location"]["path"] for f in run.findings()), run.describe()


@pytest.mark.parametrize("name", ["locked", "locked/inside.py"])
@pytest.mark.slow
def test_unreadable_directory_named_on_the_command_line_is_a_diagnostic(locked_tree: Path, name: str) -> None:
    prefix = drop_dac_prefix()
    run = run_cli(["--no-cache", "--format", "json", name, HAZARD_NAME], locked_tree, timeout=60, prefix=prefix)
    assert_clean_exit(run, allowed=(1,))
    assert _cli_hazard(run)
    assert any(f["code"] == "RC001" and "locked" in f["location"]["path"] for f in run.findings()), run.describe()


@pytest.mark.slow
def test_read_only_project_still_checks_with_the_default_cache(locked_tree: Path) -> None:
    # The default cache lives in the root; a read-only checkout (CI caches, mounted volumes) must
    # still be checked.
    prefix = drop_dac_prefix()
    os.chmod(locked_tree, 0o555)
    try:
        run = run_cli(["--format", "json", HAZARD_NAME], locked_tree, timeout=60, prefix=prefix)
    finally:
        os.chmod(locked_tree, 0o755)
    assert_clean_exit(run, allowed=(1,))
    assert _cli_hazard(run)


# ------------------------------------------------------------------------------------------------
# files that vanish during the run


def test_files_deleted_between_discovery_and_reading(tmp_path: Path, monkeypatch) -> None:
    root = new_project(tmp_path)
    (root / "gone.py").write_text(HAZARD)
    (root / "sub").mkdir()
    (root / "sub" / "gone_too.py").write_text(HAZARD)
    real_discover = rankcheck.driver.run.discover

    def discover_then_delete(*args, **kwargs):
        files = real_discover(*args, **kwargs)
        (root / "gone.py").unlink()
        (root / "sub" / "gone_too.py").unlink()
        (root / "sub").rmdir()
        return files

    monkeypatch.setattr(rankcheck.driver.run, "discover", discover_then_delete)
    for use_cache in (False, True):
        (root / "gone.py").write_text(HAZARD)
        (root / "sub").mkdir(exist_ok=True)
        (root / "sub" / "gone_too.py").write_text(HAZARD)
        findings = run_check([root], root=root, use_cache=use_cache, cache_dir=tmp_path / "cache")
        findings = findings.findings
        assert hazard_reported(findings)
        for name in ("gone.py", "gone_too.py"):
            assert [code for code, _ in _codes_at(findings, name)] in ([], ["RC001"]), findings


def test_files_churning_while_runs_repeat(tmp_path: Path) -> None:
    # A thread deletes and rewrites files (a checkout switching branches) while the analysis runs.
    root = new_project(tmp_path)
    churn = [root / f"churn_{i}.py" for i in range(40)]
    for path in churn:
        path.write_text(HAZARD)
    stop = threading.Event()

    def churner() -> None:
        i = 0
        while not stop.is_set():
            path = churn[i % len(churn)]
            try:
                if path.exists():
                    path.unlink()
                else:
                    path.write_text(HAZARD if i % 3 else "def f(:\n")
            except OSError:
                pass
            i += 1

    thread = threading.Thread(target=churner, daemon=True)
    thread.start()
    try:
        for use_cache in (False, True, True, False, True):
            result = run_check([root], root=root, use_cache=use_cache, cache_dir=tmp_path / "cache")
            assert hazard_reported(result.findings)
            assert {f.code for f in result.findings} <= {"RC001", "RC101"}
    finally:
        stop.set()
        thread.join()


# ------------------------------------------------------------------------------------------------
# file names


ODD_NAMES = ["sp ace:colon.py", "ünïcode.py", "new\nline.py", "quote\"'.py", "-dash.py"]


def test_odd_file_names_in_every_text_format(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    for name in ODD_NAMES:
        (root / name).write_text(HAZARD)
    outputs = {name: root / f"out.{name}" for name in ("concise", "full", "json", "json-lines", "github", "lsp", "sarif")}
    args = ["--no-cache"] + [f"--format={fmt}:{path}" for fmt, path in outputs.items()] + ["."]
    run = run_cli(args, root, timeout=60)
    assert_clean_exit(run, allowed=(1,))
    spellings = ("ünïcode.py", "\\u00fcn\\u00efcode.py", quote("ünïcode.py"))  # text, JSON escape, URI
    for fmt, path in outputs.items():
        text = path.read_text(encoding="utf-8")
        assert any(spelling in text for spelling in spellings), fmt


@pytest.mark.slow
def test_non_utf8_file_name_in_sarif(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    (root / os.fsdecode(b"bad\xffname.py")).write_text(HAZARD)
    run = run_cli(["--no-cache", "--format", "sarif", "."], root, timeout=60)
    assert_clean_exit(run, allowed=(1,))


def test_non_utf8_file_name_with_the_cache_on(tmp_path: Path) -> None:
    # The cache keys a module by the sibling modules it may import, names and all.
    root = new_project(tmp_path)
    (root / os.fsdecode(b"bad\xffname.py")).write_text(HAZARD)
    for _ in ("cold", "warm"):
        run = run_cli(["--format", "concise", "."], root, timeout=60)
        assert_clean_exit(run, allowed=(1,))
        assert "hazard.py" in run.stdout


@pytest.mark.slow
def test_non_utf8_file_name_in_the_other_formats(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    (root / os.fsdecode(b"bad\xffname.py")).write_text(HAZARD)
    for fmt in ("concise", "full", "json", "json-lines", "github", "lsp"):
        run = run_cli(["--no-cache", "--format", fmt, "."], root, timeout=60)
        assert_clean_exit(run, allowed=(1,))
        assert "hazard.py" in run.stdout, fmt


@pytest.mark.parametrize("destination", ["output-file", "strict-stdout"])
@pytest.mark.slow
def test_non_utf8_file_name_in_text_formats_written_strictly(tmp_path: Path, destination: str) -> None:
    root = new_project(tmp_path)
    (root / os.fsdecode(b"bad\xffname.py")).write_text(HAZARD)
    for fmt in ("concise", "full", "github"):
        if destination == "output-file":
            run = run_cli(["--no-cache", "--format", fmt, "--output", "report.txt", "."], root, timeout=60)
            written = (root / "report.txt").read_bytes() if (root / "report.txt").exists() else b""
            assert b"bad\xffname.py" in written, fmt  # the name's own bytes, as the file system has them
        else:
            run = run_cli(["--no-cache", "--format", fmt, "."], root, timeout=60, env={"PYTHONIOENCODING": "utf-8:strict"})
            written = run.stdout.encode("utf-8")  # run_cli decodes with errors="replace"
            assert "bad\ufffdname.py".encode() in written, fmt
        assert_clean_exit(run, allowed=(1,))
        assert b"hazard.py" in written, fmt


@pytest.mark.slow
def test_very_deep_directory_tree(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    deep = root
    for _ in range(1100):  # one level at a time: os.makedirs recurses once per missing level
        deep = deep / "d"
        deep.mkdir()
    (deep / "leaf.py").write_text(HAZARD)
    try:
        run = run_cli(["--no-cache", "--format", "json", "."], root, timeout=120)
        assert_clean_exit(run, allowed=(1,))
        assert _cli_hazard(run)
        assert ("RC101", HAZARD_LINE) in _json_codes(run, "leaf.py")
    finally:
        # Removed here, deepest first: pytest's clean-up of old temporary directories recurses
        # once per level and would fail on this tree in a later session.
        found, pending = [], [str(root)]
        while pending:
            with os.scandir(pending.pop()) as listing:
                for entry in listing:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    found.append((entry.path, is_dir))
                    if is_dir:
                        pending.append(entry.path)
        for path, is_dir in reversed(found):  # children were found after their parents
            (os.rmdir if is_dir else os.unlink)(path)


@pytest.mark.parametrize("pattern", ["[]", "[z-a]"])
def test_malformed_gitignore_pattern(tmp_path: Path, pattern: str) -> None:
    root = new_project(tmp_path)
    (root / ".gitignore").write_text(f"__pycache__/\n{pattern}\n")
    run = run_cli(["--no-cache", "--format", "json", "."], root, timeout=60)
    assert_clean_exit(run, allowed=(1,))
    assert _cli_hazard(run)


# ------------------------------------------------------------------------------------------------
# the module graph: cycles, recursion, long chains


def _write(root: Path, files: dict) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_import_cycles_and_re_export_loops_terminate(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    _write(
        root,
        {
            "pkg/__init__.py": "from pkg import *\nfrom .a import *\nfrom . import b\n",
            "pkg/a.py": """\
                import torch.distributed as dist
                from pkg.b import *
                from pkg.b import relay as relay_b
                from pkg import a as myself


                def relay(t):
                    return relay_b(t)


                def main(t):
                    if dist.get_rank() == 0:
                        myself.relay(t)
                """,
            "pkg/b.py": """\
                from pkg.a import *
                from pkg.a import relay as relay_a
                from pkg.a import relay


                def sync(t):
                    relay_a(t)
                """,
            # A name that re-exports itself around a cycle of modules.
            "x.py": "from y import thing as other\nfrom y import *\n",
            "y.py": "from z import other as thing\n",
            "z.py": "from x import other\n\n\ndef use():\n    other()\n",
        },
    )
    result = run_check([root], root=root)
    assert hazard_reported(result.findings)
    assert {f.code for f in result.findings} <= {"RC101"}, [str(f.location) + f.code for f in result.findings]


def test_class_hierarchy_cycle_across_modules_terminates(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    _write(
        root,
        {
            "ca.py": """\
                import torch.distributed as dist
                import cb


                class A(cb.B):
                    def step(self, t):
                        if dist.get_rank() == 0:
                            self.sync(t)
                """,
            "cb.py": """\
                import torch.distributed as dist
                import ca


                class B(ca.A):
                    def sync(self, t):
                        super().sync(t)
                        self.step(t)
                        dist.all_reduce(t)
                """,
        },
    )
    result = run_check([root], root=root)
    assert hazard_reported(result.findings)
    assert ("RC101", 8) in _codes_at(result.findings, "ca.py")


def test_mutual_recursion_across_modules_with_a_guarded_collective_inside(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    _write(
        root,
        {
            "ping.py": """\
                import torch.distributed as dist
                import pong


                def ping(t, n):
                    if n == 0:
                        return
                    if dist.get_rank() == 0:
                        dist.barrier()
                    pong.pong(t, n - 1)
                """,
            "pong.py": """\
                import torch.distributed as dist
                from ping import ping


                def pong(t, n):
                    dist.all_reduce(t)
                    rank = dist.get_rank()
                    if rank != 0:
                        ping(t, n)
                    else:
                        ping(t, n - 1)
                """,
            "driver.py": """\
                import pong


                def train(t):
                    pong.pong(t, 10)
                """,
        },
    )
    result = run_check([root], root=root)
    assert hazard_reported(result.findings)
    assert ("RC101", 9) in _codes_at(result.findings, "ping.py"), [f"{f.location} {f.code}" for f in result.findings]


RECURSION_UNDER_GUARD = (
    "a recursive call under a rank guard is taken as issuing nothing: interp/interpreter.py:Interpreter.run returns an empty "
    "Result when the callee is already on the stack ('its own collectives are already counted where it "
    "started'), and the caller's result built on it is memoised; but the ranks that recurse issue the "
    "collectives again and the others do not. link.py's reach fixpoint knows the callee reaches all_reduce"
)


def test_self_recursion_under_a_rank_guard(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    _write(
        root,
        {
            "rec.py": """\
                import torch.distributed as dist


                def sync(t, n):
                    if n == 0:
                        return
                    dist.all_reduce(t)
                    if dist.get_rank() == 0:
                        sync(t, n - 1)
                """,
        },
    )
    result = run_check([root], root=root)
    assert ("RC101", 9) in _codes_at(result.findings, "rec.py"), [f"{f.location} {f.code}" for f in result.findings]


def test_mutual_recursion_through_a_rank_guarded_call(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    _write(
        root,
        {
            "even.py": """\
                import torch.distributed as dist
                import odd


                def even(t, n):
                    dist.all_reduce(t)
                    if dist.get_rank() == 0:
                        odd.odd(t, n - 1)
                """,
            "odd.py": """\
                from even import even


                def odd(t, n):
                    even(t, n - 1)
                """,
        },
    )
    result = run_check([root], root=root)
    assert ("RC101", 8) in _codes_at(result.findings, "even.py"), [f"{f.location} {f.code}" for f in result.findings]


def _chain_project(root: Path, length: int) -> None:
    for i in range(length):
        nxt = f"import m{i + 1}\n\n\ndef f(t):\n    m{i + 1}.f(t)\n" if i + 1 < length else "import torch.distributed as dist\n\n\ndef f(t):\n    dist.all_reduce(t)\n"
        (root / f"m{i}.py").write_text(nxt)
    (root / "entry.py").write_text("import torch.distributed as dist\nimport m0\n\n\ndef main(t):\n    if dist.get_rank() == 0:\n        m0.f(t)\n")


def test_call_chain_through_ten_modules_is_followed(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    _chain_project(root, 10)
    result = run_check([root], root=root)
    assert ("RC101", 7) in _codes_at(result.findings, "entry.py")


def test_call_chain_through_thirteen_modules_is_followed(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    _chain_project(root, 13)
    result = run_check([root], root=root)
    assert ("RC101", 7) in _codes_at(result.findings, "entry.py")


# ------------------------------------------------------------------------------------------------
# many files (slow)


@slow
def test_20000_files_in_bounded_time_and_memory(tmp_path: Path) -> None:
    root = new_project(tmp_path)
    for d in range(200):
        pkg = root / f"pkg{d}"
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        for i in range(100):
            if i % 10 == 0:  # one in ten mentions the distributed API
                text = f"import torch.distributed as dist\n\n\ndef sync_{i}(t):\n    dist.all_reduce(t)\n"
            else:
                text = f"import os\n\n\ndef helper_{i}(x):\n    return os.path.join(str(x), '{i}')\n"
            (pkg / f"mod{i}.py").write_text(text)
    (root / "train.py").write_text(
        "import torch.distributed as dist\nfrom pkg7.mod30 import sync_30\n\n\ndef main(t):\n    if dist.get_rank() == 0:\n        sync_30(t)\n"
    )
    timings = {}
    for label, args in (("cold", ["--no-cache"]), ("cache fill", []), ("warm cache", [])):
        run = run_cli([*args, "--format", "json", "."], root, timeout=BIG_INPUT_TIMEOUT_S, address_space_limit=BIG_INPUT_ADDRESS_SPACE)
        timings[label] = run
        print(f"\n[figure] 20,000 files, {label}: {run.wall_s:.1f} s, peak RSS {run.max_rss_bytes / 2**20:.0f} MB")
        assert_clean_exit(run, allowed=(1,))
        assert _cli_hazard(run)
        assert ("RC101", 7) in _json_codes(run, "train.py")
        assert run.max_rss_bytes < BIG_INPUT_RSS_BYTES
