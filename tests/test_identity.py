"""Module identity by path (driver/identity.py): every file is its own module, absolute imports
find what Python finds from the importing file's directory, and what stays ambiguous is an RC004
naming the other file, never silence. A project where no two files share a name keeps the names,
summaries and findings it had before the mechanism existed."""

from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path
from typing import Dict

import pytest
from corpus_support import CORPUS, cases

from rankcheck.api import run_check
from rankcheck.driver import cache as cache_module
from rankcheck.driver import discover as discover_module
from rankcheck.driver.discover import discover, module_name
from rankcheck.driver.identity import last_word, plain_name
from rankcheck.frontend.lower import summarize_source

PROJECT_CASES = [c for c in cases() if c.path.is_dir()]
RANK0_CALL = """\
    import torch.distributed as dist

    import utils


    def main(t):
        if dist.get_rank() == 0:
            utils.sync(t)
    """
REDUCES = "import torch.distributed as dist\n\n\ndef sync(t):\n    dist.all_reduce(t)\n"
LOCAL = "def sync(t):\n    return t\n"


def _write(root: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def _names(root: Path) -> Dict[str, str]:
    return {f.path.relative_to(root).as_posix(): f.module for f in discover([root], root)}


def _by_path(root: Path) -> dict:
    return {f.path.relative_to(root).as_posix(): f for f in discover([root], root)}


def _codes(findings, root: Path) -> list:
    return sorted((Path(f.location.path).resolve().relative_to(root.resolve()).as_posix(), f.location.line, f.code) for f in findings)


# ------------------------------------------------------------------------------------------------
# names


def test_scripts_of_one_name_in_sibling_folders_are_two_modules_each_importing_its_own(tmp_path: Path) -> None:
    root = _write(tmp_path, {"pretrain/train.py": RANK0_CALL, "pretrain/utils.py": REDUCES,
                             "finetune/train.py": RANK0_CALL, "finetune/utils.py": LOCAL})
    files = _by_path(root)
    assert {p: f.module for p, f in files.items()} == {
        "finetune/train.py": "finetune/train", "finetune/utils.py": "finetune/utils",
        "pretrain/train.py": "pretrain/train", "pretrain/utils.py": "pretrain/utils",
    }
    assert files["pretrain/train.py"].import_map == (("train", "pretrain/train"), ("utils", "pretrain/utils"))
    assert not any(f.notes for f in files.values())  # Python's rules resolve every import: nothing to say
    # Each train.py's `utils.sync` is its own folder's: the one that reduces is flagged, the other not.
    result = run_check([root], root=root)
    assert _codes(result.findings, root) == [("pretrain/train.py", 8, "RC101")]
    assert result.analysis is not None and result.analysis.program.collisions == []  # none dropped
    assert len(result.analysis.program.modules) == 4


def test_internal_names_read_as_paths_and_still_name_what_imports_spell() -> None:
    assert plain_name("pretrain/utils") == "utils" and last_word("pretrain/utils") == "utils"
    assert plain_name("src/pkg.sub.mod") == "pkg.sub.mod" and last_word("src/pkg.sub.mod") == "mod"
    assert plain_name("x~py") == "x" and plain_name("pkg.mod") == "pkg.mod"


def test_a_project_without_shared_names_keeps_every_name(tmp_path: Path) -> None:
    root = _write(tmp_path, {"pkg/__init__.py": "", "pkg/ops.py": REDUCES, "pkg/sub/__init__.py": "",
                             "pkg/sub/deep.py": LOCAL, "scripts/run.py": RANK0_CALL, "tools/utils.py": LOCAL, "top.py": ""})
    for source in discover([root], root):
        assert source.module == module_name(source.path, root)[0]
        assert source.import_map == () and source.notes == ()


def test_the_project_roots_module_keeps_its_name_and_a_folder_of_scripts_shadows_it(tmp_path: Path) -> None:
    root = _write(tmp_path, {"utils.py": REDUCES, "train.py": RANK0_CALL,
                             "tools/utils.py": LOCAL, "tools/train_small.py": RANK0_CALL})
    files = _by_path(root)
    assert files["utils.py"].module == "utils" and files["train.py"].import_map == ()
    assert files["tools/utils.py"].module == "tools/utils"
    assert files["tools/train_small.py"].import_map == (("utils", "tools/utils"),)
    (note,) = files["tools/utils.py"].notes
    assert (note.variant, note.name, Path(note.other).name, note.root) == ("shadows", "utils", "utils.py", "tools")
    findings = run_check([root], root=root).findings
    assert _codes(findings, root) == [("tools/utils.py", 1, "RC004"), ("train.py", 8, "RC101")]
    (shadow,) = [f for f in findings if f.code == "RC004"]
    assert shadow.message.startswith("shadows a project module: `import utils` in the files of tools/ finds this file")
    assert shadow.severity == "warning" and dict(shadow.extra)["other"].endswith("utils.py")


def test_a_package_keeps_its_dotted_resolution_and_its_relative_imports_stay_in_its_copy(tmp_path: Path) -> None:
    root = _write(tmp_path, {
        "src/pkg/__init__.py": "", "src/pkg/ops.py": REDUCES,
        "src/pkg/train.py": "import torch.distributed as dist\nfrom pkg.ops import sync\nfrom . import ops\n\n\ndef main(t):\n"
                            "    if dist.get_rank() == 0:\n        sync(t)\n        ops.sync(t)\n",
        "lib/pkg/__init__.py": "", "lib/pkg/ops.py": LOCAL,
        "lib/pkg/train.py": "import torch.distributed as dist\nfrom pkg.ops import sync\n\n\ndef main(t):\n"
                            "    if dist.get_rank() == 0:\n        sync(t)\n",
    })
    files = _by_path(root)
    assert files["src/pkg/ops.py"].module == "src/pkg.ops" and files["lib/pkg/__init__.py"].module == "lib/pkg"
    summary = summarize_source((root / "src/pkg/train.py").read_text(), "train.py", "src/pkg.train", False,
                               import_map=files["src/pkg/train.py"].import_map)
    assert dict(summary.imports)["sync"] == "src/pkg.ops.sync" and dict(summary.imports)["ops"] == "src/pkg.ops"
    codes = _codes(run_check([root], root=root).findings, root)
    assert codes == [("lib/pkg/__init__.py", 1, "RC004"), ("src/pkg/__init__.py", 1, "RC004"),
                     ("src/pkg/train.py", 8, "RC101"), ("src/pkg/train.py", 9, "RC101")]


def test_a_module_beside_the_package_of_its_name_is_hidden_and_a_stub_is_not_reported(tmp_path: Path) -> None:
    root = _write(tmp_path, {"x/__init__.py": "", "x.py": "", "y.py": "", "y.pyi": ""})
    files = _by_path(root)
    assert (files["x/__init__.py"].module, files["x.py"].module) == ("x", "x~py")
    assert (files["y.py"].module, files["y.pyi"].module) == ("y", "y~pyi")
    (note,) = files["x.py"].notes
    assert note.variant == "hidden" and Path(note.other).as_posix().endswith("x/__init__.py")
    assert not files["y.pyi"].notes and not files["x/__init__.py"].notes


def test_names_stay_unique_whatever_the_folders_are_called(tmp_path: Path) -> None:
    root = _write(tmp_path, {"v1.0/train.py": "", "v1_0/train.py": "", "v2.0/train.py": "",
                             "a/conftest.py": "", "b/conftest.py": "", "a/setup.py": "", "b/setup.py": ""})
    names = _names(root)
    assert names["v1.0/train.py"] == "v1_0/train" and names["v1_0/train.py"] == "v1_0/train~2"
    assert names["v2.0/train.py"] == "v2_0/train"
    assert len(set(names.values())) == len(names)
    assert all("." not in name.split("/")[0] for name in names.values())  # a qualname splits right
    assert not any(f.notes for f in discover([root], root))  # files nothing imports by name


def test_only_the_named_files_report_their_notes(tmp_path: Path) -> None:
    root = _write(tmp_path, {"a/pkg/__init__.py": "", "b/pkg/__init__.py": "", "a/run.py": ""})
    assert _codes(run_check([root / "a" / "run.py"], root=root).findings, root) == []
    assert _codes(run_check([root / "a" / "pkg" / "__init__.py"], root=root).findings, root) == [("a/pkg/__init__.py", 1, "RC004")]
    assert run_check([root], root=root, ignore=["RC004"]).findings == []
    (root / "a/pkg/__init__.py").write_text("# noqa: RC004\n")
    assert _codes(run_check([root], root=root).findings, root) == [("b/pkg/__init__.py", 1, "RC004")]


# ------------------------------------------------------------------------------------------------
# nothing changes where no two files share a name


def _no_identity(files, root, roots):
    return list(files)


@pytest.mark.parametrize("case", PROJECT_CASES, ids=[c.name for c in PROJECT_CASES])
def test_a_project_without_shared_names_gets_byte_identical_names_and_findings(case, monkeypatch) -> None:
    root = case.path
    names = [(str(f.path), f.module, f.is_package) for f in discover([root], root)]
    if len({n for _, n, _ in names}) != len({plain_name(n) for _, n, _ in names}):
        pytest.skip("files of this case share a name: what the mechanism is for")
    result = run_check([root], root=root)
    findings = json.dumps([f.to_dict() for f in result.findings], sort_keys=True)
    assert result.analysis is not None
    modules = sorted((s.path, s.module, s.imports) for s in result.analysis.program.modules.values())
    monkeypatch.setattr(discover_module.identity, "assign", _no_identity)
    assert names == [(str(f.path), f.module, f.is_package) for f in discover([root], root)]
    before = run_check([root], root=root)
    assert json.dumps([f.to_dict() for f in before.findings], sort_keys=True) == findings
    assert before.analysis is not None
    assert sorted((s.path, s.module, s.imports) for s in before.analysis.program.modules.values()) == modules


def test_the_cache_key_of_a_file_without_an_import_map_is_computed_as_before() -> None:
    digest, module = "b" + "0" * 64, "pkg.mod"
    assert cache_module._entry_key(digest, module, False) == hashlib.sha256(f"{digest}\0{module}\0{0}".encode()).hexdigest()
    assert cache_module._entry_key(digest, module, False, (("utils", "a/utils"),)) != cache_module._entry_key(digest, module, False)


def test_the_corpus_groups_of_single_files_share_no_name() -> None:
    # Each group of single-file cases runs as one project in the focus and workspace tests: a
    # shared name there would test this mechanism by accident.
    for group in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        stems = [p.stem for p in group.glob("*.py")]
        assert len(stems) == len(set(stems)), group.name


# ------------------------------------------------------------------------------------------------
# everything downstream


def test_a_warm_cache_follows_a_same_named_file_appearing_elsewhere(tmp_path: Path) -> None:
    root = _write(tmp_path / "p", {"pretrain/train.py": RANK0_CALL, "pretrain/utils.py": REDUCES})
    cache = tmp_path / "cache"
    assert _codes(run_check([root], root=root, use_cache=True, cache_dir=cache).findings, root) == [("pretrain/train.py", 8, "RC101")]
    # A second folder sorts first: the cached summary of pretrain/train.py (import map empty)
    # must not be reused now that its `utils` is `pretrain/utils`.
    _write(root, {"eval/train.py": RANK0_CALL, "eval/utils.py": LOCAL})
    warm = run_check([root], root=root, use_cache=True, cache_dir=cache).findings
    assert _codes(warm, root) == _codes(run_check([root], root=root).findings, root) == [("pretrain/train.py", 8, "RC101")]


def test_the_prefilter_follows_a_helper_of_an_internal_name(tmp_path: Path, monkeypatch) -> None:
    root = _write(tmp_path, {"pretrain/train.py": RANK0_CALL, "pretrain/utils.py": "from comm import reduce_all as sync\n",
                             "pretrain/comm.py": "import torch.distributed as dist\n\n\ndef reduce_all(t):\n    dist.all_reduce(t)\n",
                             "finetune/train.py": RANK0_CALL, "finetune/utils.py": LOCAL, "finetune/comm.py": LOCAL})
    monkeypatch.setenv("RANKCHECK_PREFILTER", "force")
    forced = _codes(run_check([root], root=root).findings, root)
    monkeypatch.setenv("RANKCHECK_PREFILTER", "0")
    assert forced == _codes(run_check([root], root=root).findings, root) == [("pretrain/train.py", 8, "RC101")]


def test_verify_gets_the_static_findings_of_a_shadowed_script(tmp_path: Path, monkeypatch) -> None:
    from rankcheck.verify.cli import _static_findings

    root = _write(tmp_path, {"pyproject.toml": "", "finetune/train.py": RANK0_CALL, "finetune/utils.py": LOCAL,
                             "pretrain/train.py": RANK0_CALL, "pretrain/utils.py": REDUCES})
    monkeypatch.chdir(root)
    findings, _ = _static_findings("pretrain/train.py")
    assert [(Path(f.location.path).as_posix(), f.location.line, f.code) for f in findings] == [("pretrain/train.py", 8, "RC101")]
    assert _static_findings("finetune/train.py")[0] == []


def test_an_import_of_a_name_other_folders_share_is_an_rc004_at_the_import(tmp_path: Path) -> None:
    root = _write(tmp_path, {"pretrain/train.py": RANK0_CALL, "pretrain/utils.py": REDUCES,
                             "finetune/train.py": RANK0_CALL, "finetune/utils.py": LOCAL,
                             "tools/report.py": "import logging\nimport sys\n\nsys.path.insert(0, 'pretrain')\nimport utils\n"
                                                "from utils import sync\n\n\ndef main():\n    import utils.sub\n",
                             "tools/data/__init__.py": "", "tools/explore.py": "import data\nimport utils  # noqa: RC004\n"})
    findings = [f for f in run_check([root], root=root).findings if f.code == "RC004"]
    assert _codes(findings, root) == [("tools/report.py", 5, "RC004"), ("tools/report.py", 6, "RC004"), ("tools/report.py", 10, "RC004")]
    assert findings[0].message.startswith("import of an ambiguous module: no `utils` beside this file or at the project root, but 2 elsewhere")
    assert {Path(c.strip()).as_posix()[-17:] for c in dict(findings[0].extra)["candidates"].split(",")} == {"finetune/utils.py", "pretrain/utils.py"}
    # Beside a folder of its own name (a namespace package), at the project root, or in the
    # standard library (`logging` above): the import finds one thing, nothing to report.
    (root / "tools/utils").mkdir()  # a folder with no module in it is no namespace package
    assert len([f for f in run_check([root], root=root).findings if f.code == "RC004"]) == 3
    _write(root, {"tools/utils/helpers.py": LOCAL})
    assert [f for f in run_check([root], root=root).findings if f.code == "RC004"] == []
    (root / "tools/utils/helpers.py").unlink()
    (root / "tools/utils").rmdir()
    _write(root, {"utils.py": LOCAL})
    assert [f for f in run_check([root], root=root).findings if f.code == "RC004" and "import of" in f.message] == []


def _summaries_both_ways(path: Path):
    from rankcheck.driver.pool import summarize_task

    text = path.read_text(encoding="utf-8")
    full = summarize_task((0, "full", text, str(path), "m", False, ()))[2]
    light = summarize_task((0, "light", text, str(path), "m", False, ()))[2]
    return full, light


def test_a_minimal_summary_records_the_absolute_imports_a_full_one_does() -> None:
    # RC004's unresolved imports read them from whichever summary the run made of the file: the
    # prefilter's choice (or the language server's parsing everything) must not change them.
    sources = sorted((CORPUS.parent / "rankcheck").rglob("*.py")) + sorted(CORPUS.rglob("*.py"))
    compared = 0
    for path in sources:
        full, light = _summaries_both_ways(path)
        if full.problem is not None or light.problem is not None:
            continue
        assert light.absolute_imports == full.absolute_imports, path
        compared += bool(full.absolute_imports)
    assert compared > 200
    nested = textwrap.dedent("""\
        import a.b as c, d
        from e.f import g
        from . import h
        from .i import j
        if x:
            import k
        else:
            from l import m
        try:
            import n
        except ImportError:
            import o
        finally:
            import p
        class Q:
            import r  # a class body: not lowered, and not counted either
            def s(self):
                import t
            class U:
                def v(self):
                    import w
        def x():
            with y:
                import z
            for _ in y:
                import aa
            while y:
                import bb
            match y:
                case 1:
                    import cc
        """)
    import ast

    from rankcheck.frontend.scopes import absolute_imports_in

    expected = ("a", "d", "e", "k", "l", "n", "o", "p", "t", "w", "z", "aa", "bb", "cc")
    assert tuple(name for name, _ in absolute_imports_in(ast.parse(nested))) == expected
    assert tuple(name for name, _ in summarize_source(nested, "n.py", "n").absolute_imports) == expected


def test_a_package_file_importing_a_module_beside_it_is_a_module_reachable_two_ways(tmp_path: Path) -> None:
    # Megatron-LM's examples/mimo/train.py: in the package `examples.mimo`, run as a script, it
    # imports `utils` (its sibling package examples/mimo/utils/) while other folders have a
    # utils.py of their own. Imported as a module it would find none of them.
    root = _write(tmp_path, {"examples/__init__.py": "", "examples/mimo/__init__.py": "",
                             "examples/mimo/utils/__init__.py": "", "examples/mimo/utils/data_helpers.py": REDUCES,
                             "examples/mimo/train.py": "from utils.data_helpers import sync\n",
                             "tools/utils.py": LOCAL, "tools/run.py": "", "bench/utils.py": LOCAL, "bench/run_bench.py": ""})
    (finding,) = [f for f in run_check([root], root=root).findings if f.code == "RC004"]
    assert _codes([finding], root) == [("examples/mimo/train.py", 1, "RC004")]
    assert finding.message.startswith("module reachable two ways: `import utils` finds ")
    assert Path(dict(finding.extra)["other"]).as_posix().endswith("examples/mimo/utils/__init__.py")
    # In the standard library's name, the import finds the library: nothing to say.
    _write(root, {"examples/mimo/logging.py": "", "tools/logging.py": "", "bench/logging.py": "",
                  "examples/mimo/train.py": "import logging\n"})
    assert [f for f in run_check([root], root=root).findings if f.code == "RC004"] == []
