"""The library API the CLI, the language server, pre-commit and `rankcheck fr` share."""

from __future__ import annotations

import textwrap
from pathlib import Path

from rankcheck import check_paths
from rankcheck.api import enclosing_rank_guards, run_check

TRAIN = textwrap.dedent(
    """\
    import torch.distributed as dist
    from metrics import mean


    def log(t):
        rank = dist.get_rank()
        if rank == 0:
            print(mean(t))
        for _ in range(3):
            dist.barrier()
    """
)


def _project(tmp_path: Path, metrics: str) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "metrics.py").write_text(metrics)
    return tmp_path


def test_unsaved_buffer_replaces_the_file_on_disk(tmp_path: Path) -> None:
    root = _project(tmp_path, "def mean(t):\n    return t.mean()\n")
    assert check_paths([root / "train.py"], root=root) == []
    # The editor's unsaved metrics.py now reduces across ranks: train.py's call becomes a hazard.
    edited = "import torch.distributed as dist\n\n\ndef mean(t):\n    dist.all_reduce(t)\n    return t\n"
    findings = check_paths([root / "train.py"], root=root, sources={str(root / "metrics.py"): edited})
    assert [(f.code, f.location.line) for f in findings] == [("RC101", 8)]
    assert findings[0].chain[-1].callee == "dist.all_reduce"
    # ...and nothing was written to disk
    assert "all_reduce" not in (root / "metrics.py").read_text()


def test_reports_only_on_the_named_paths(tmp_path: Path) -> None:
    root = _project(tmp_path, "import torch.distributed as dist\n\n\ndef mean(t):\n    if dist.get_rank() == 0:\n        dist.all_reduce(t)\n    return t\n")
    only_metrics = run_check([root / "metrics.py"], root=root)
    assert {Path(f.location.path).name for f in only_metrics.findings} == {"metrics.py"}
    assert only_metrics.files_checked == 1 and only_metrics.files_read == 2


def test_enclosing_rank_guards(tmp_path: Path) -> None:
    root = _project(tmp_path, "import torch.distributed as dist\n\n\ndef mean(t):\n    dist.all_reduce(t)\n    return t\n")
    (guard,) = enclosing_rank_guards(root / "train.py", 8, root=root)
    assert guard.text == "if rank == 0:" and guard.location.line == 7
    assert guard.source is not None and guard.source.text == "dist.get_rank()" and guard.source.location.line == 6
    assert enclosing_rank_guards(root / "train.py", 10, root=root) == []


def test_a_message_names_the_file_of_a_source_in_another_module(tmp_path: Path) -> None:
    """"at line 5" would send the reader to the reported file's line 5; a source elsewhere is
    named with its path, one in the same file by its line."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text("import torch\n\n\ndef random_rows():\n    return torch.zeros(int(torch.randint(1, 8, (1,))))\n")
    (tmp_path / "train.py").write_text(
        textwrap.dedent(
            """\
            import torch
            import torch.distributed as dist

            from helpers import random_rows


            def sync_helper_rows():
                dist.all_reduce(random_rows())


            def sync_own_rows():
                rows = torch.zeros(int(torch.randint(1, 8, (1,))))
                dist.all_reduce(rows)
            """
        )
    )
    findings = check_paths([tmp_path / "train.py"], root=tmp_path)
    assert [(f.code, f.location.line) for f in findings] == [("RC104", 8), ("RC104", 13)]
    source = findings[0].source
    assert source is not None and Path(source.location.path).name == "helpers.py"
    assert f"`torch.randint()` at {source.location.path}:5)" in findings[0].message
    assert "`torch.randint()` at line 12)" in findings[1].message


def test_a_condition_quoted_in_a_message_leaves_out_the_comments_inside_it(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(
        textwrap.dedent(
            """\
            import torch.distributed as dist


            def sync(grad, flag):
                if (
                    # only the first rank ("#0") has the flag
                    dist.get_rank() == 0  # the rank itself
                    and flag
                ):
                    dist.all_reduce(grad)
            """
        )
    )
    (finding,) = check_paths([tmp_path / "train.py"], root=tmp_path)
    assert finding.code == "RC101"
    assert finding.guard is not None and finding.guard.condition == "( dist.get_rank() == 0 and flag )"
    assert "`( dist.get_rank() == 0 and flag )` is true" in finding.message


def test_two_packages_of_one_name_are_an_rc004_at_each_naming_the_other(tmp_path: Path) -> None:
    # src/pkg and vendored/pkg: each is analysed as its own module (the files beside each import
    # their own), and an import of `pkg` from elsewhere could mean either: said, not guessed.
    (tmp_path / "pyproject.toml").write_text("")
    for folder, body in (("src", "import torch.distributed as dist\n\n\ndef sync(t):\n    dist.all_reduce(t)\n"),
                         ("vendored", "def sync(t):\n    return t\n")):
        (tmp_path / folder / "pkg").mkdir(parents=True)
        (tmp_path / folder / "pkg" / "__init__.py").write_text("")
        (tmp_path / folder / "pkg" / "ops.py").write_text(body)
    (tmp_path / "train.py").write_text(
        "import torch.distributed as dist\nfrom pkg.ops import sync\n\n\ndef main(t):\n    if dist.get_rank() == 0:\n        sync(t)\n"
    )
    findings = check_paths([tmp_path], root=tmp_path)
    by_file = {Path(f.location.path).resolve().relative_to(tmp_path.resolve()).as_posix(): f for f in findings}
    assert sorted(by_file) == ["src/pkg/__init__.py", "train.py", "vendored/pkg/__init__.py"]
    # train.py's `pkg` is neither beside it nor at the root: left unresolved (no RC101), and said so
    unresolved = by_file.pop("train.py")
    assert (unresolved.code, unresolved.location.line) == ("RC004", 2)
    assert unresolved.message.startswith("import of an ambiguous module: no `pkg` beside this file or at the project root, but 2 elsewhere")
    for path, other in (("src/pkg/__init__.py", "vendored/pkg/__init__.py"), ("vendored/pkg/__init__.py", "src/pkg/__init__.py")):
        finding = by_file[path]
        assert (finding.code, finding.severity, finding.location.line) == ("RC004", "warning", 1)
        assert finding.message.startswith("two packages named `pkg`: this one and ")
        assert Path(dict(finding.extra)["other"]).resolve() == (tmp_path / other).resolve()
        assert str(Path(dict(finding.extra)["other"])) in finding.message
    # reported where the files are named
    assert [(f.code, f.location.line) for f in check_paths([tmp_path / "train.py"], root=tmp_path)] == [("RC004", 2)]
