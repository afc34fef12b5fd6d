"""Demand-driven parsing changes no finding: the whole corpus with and without the prefilter, every
multi-module case with each file reported alone (the others are context the prefilter may skip),
and chains that cross modules the text scan alone would skip."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Dict, List

import pytest
from corpus_support import CORPUS, Case, actual_marks, cases

from rankcheck.api import run_check
from rankcheck.catalog import load_catalog
from rankcheck.driver import prefilter
from rankcheck.driver.discover import discover
from rankcheck.driver.summaries import PipelineOptions, PipelineStats, collect_summaries

ALL_CASES = cases()
DIRECTORY_CASES = [c for c in ALL_CASES if c.path.is_dir()]


def _findings(result) -> List[str]:
    return sorted(json.dumps(f.to_dict(), sort_keys=True) for f in result.findings)


# "force": the fixpoint runs even where the catalog's names alone select most of the source (the
# default then parses everything, which is the reference behaviour and would prove nothing).
ON, OFF = "force", "0"


def _check(monkeypatch, prefilter_on: bool, paths, **kwargs):
    monkeypatch.setenv("RANKCHECK_PREFILTER", ON if prefilter_on else OFF)
    return run_check(paths, **kwargs)


def write_tree(root: Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


# ------------------------------------------------------------------------------------------------
# the catalog is classified on purpose


def test_every_catalog_field_is_classified_as_seed_or_ignored() -> None:
    fields = set(prefilter.catalog_fields(load_catalog()))
    classified = set(prefilter.SEED_FIELDS) | set(prefilter.IGNORED_FIELDS)
    assert fields - classified == set(), (
        "new Catalog fields: add them to prefilter.SEED_FIELDS (a file naming them can produce a "
        "finding) or prefilter.IGNORED_FIELDS (they only refine code already selected)"
    )


def test_seeds_come_from_the_catalog_and_config_extras(tmp_path: Path) -> None:
    catalog = load_catalog().with_extras({"myproj.comm.sync_everything": "all_reduce"}, {"myproj.env.my_rank": "global_rank"})
    seeds = {s.dotted: s for s in prefilter.seeds_from_catalog(catalog)}
    assert seeds["myproj.comm.sync_everything"].name == "sync_everything"
    assert seeds["myproj.comm.sync_everything"].qualifiers == frozenset({"comm"})
    assert "myproj.env.my_rank" in seeds
    for qual in load_catalog().collectives:
        assert qual in seeds


# ------------------------------------------------------------------------------------------------
# the text scan


def test_scan_reads_imports_aliases_and_attributes() -> None:
    scan = prefilter.scan_text(
        textwrap.dedent(
            """\
            import torch.distributed as dist, os
            from deepspeed import comm as ds_comm
            from torch.distributed import (
                all_reduce as ar,
                barrier,
            )
            from . import sibling
            from pkg.util import *
            x = args.local_rank  # a comment naming get_rank
            """
        )
    )
    assert ("dist", "torch.distributed") in scan.bindings
    assert ("ds_comm", "deepspeed.comm") in scan.bindings
    assert ("ar", "torch.distributed.all_reduce") in scan.bindings
    assert ("barrier", "torch.distributed.barrier") in scan.bindings
    assert ("*", "pkg.util") in scan.bindings
    assert scan.relative
    assert "local_rank" in scan.attributes and "args" not in scan.attributes
    assert {"get_rank", "dist", "sibling"} <= scan.words


def _selector(files: Dict[str, str]) -> prefilter.Selector:
    names = sorted(files)
    scans = [prefilter.scan_text(textwrap.dedent(files[n])) for n in names]
    modules = [(n[:-3].replace("/", ".").replace(".__init__", ""), n.endswith("__init__.py")) for n in names]
    return prefilter.Selector(prefilter.seeds_from_catalog(load_catalog()), scans, modules)


def test_qualified_seeds_need_their_library_named() -> None:
    selector = _selector(
        {
            "a.py": "import functools\nx = functools.reduce(f, xs)\n",  # not torch.distributed.reduce
            "b.py": "import torch.distributed as dist\ndist.reduce(t, 0)\n",
            "c.py": "from pkg.comm import dist\ndist.barrier()\n",  # alias bound in pkg/comm.py
            "d.py": "x = 1\n",
            "e.py": "def f(rank):\n    return rank + 1\n",  # a local named rank is not a rank source
            "f.py": "def f(args):\n    return args.local_rank\n",
            "pkg/comm.py": "from torch import distributed as dist\n",
        }
    )
    chosen = [selector.is_seed_candidate(k) for k in range(7)]
    assert chosen == [False, True, True, False, False, True, False]


# ------------------------------------------------------------------------------------------------
# equivalence on the corpus


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory) -> Path:
    # Full summaries do not depend on the prefilter: sharing a cache keeps the second pass cheap.
    return tmp_path_factory.mktemp("prefilter-cache")


# Where the demand-driven choice of what to parse still loses a finding, and why; the test holds
# the prefilter to exactly this list.
KNOWN_PREFILTER_GAPS: set[str] = set()


@pytest.mark.slow
def test_corpus_findings_identical_with_and_without_prefilter(monkeypatch, shared_cache: Path) -> None:
    differences = []
    for case in ALL_CASES:
        without, findings_without = _marks(monkeypatch, case, False, shared_cache)
        with_, findings_with = _marks(monkeypatch, case, True, shared_cache)
        if (findings_with != findings_without) != (case.name in KNOWN_PREFILTER_GAPS):
            differences.append(f"{case.name}: without {sorted(without)} / with {sorted(with_)}")
    assert not differences, "\n".join(differences)


def _marks(monkeypatch, case: Case, prefilter_on: bool, cache: Path):
    monkeypatch.setenv("RANKCHECK_PREFILTER", ON if prefilter_on else OFF)
    marks, findings = actual_marks(case, use_cache=True, cache_dir=cache)
    return marks, sorted(json.dumps(f.to_dict(), sort_keys=True) for f in findings)


@pytest.mark.parametrize("case", DIRECTORY_CASES, ids=[c.name for c in DIRECTORY_CASES])
def test_each_file_reported_alone_gives_the_same_findings(monkeypatch, case: Case, shared_cache: Path) -> None:
    """The other modules of the case are context: the prefilter may skip them, findings stay."""
    for file in case.files():
        kwargs = dict(root=case.path, use_cache=True, cache_dir=shared_cache)
        without = _findings(_check(monkeypatch, False, [file], **kwargs))
        with_ = _findings(_check(monkeypatch, True, [file], **kwargs))
        assert (with_ == without) != (case.name in KNOWN_PREFILTER_GAPS and without != []), f"{file.relative_to(CORPUS)}"


@pytest.mark.slow
def test_the_prefilter_skips_files_in_the_corpus() -> None:
    """The equivalence above would be vacuous if nothing were ever skipped."""
    root = CORPUS / "core"
    files = discover([root / "rc101_metric_helper_two_modules_away" / "train.py"], root)
    stats = PipelineStats()
    collect_summaries(files, {}, load_catalog(), PipelineOptions(prefilter=True, dense_share=float("inf")), stats)
    assert stats.minimal_used > 0
    assert stats.full_used > 0


# ------------------------------------------------------------------------------------------------
# chains the text scan alone cannot see


THREE_AWAY = {
    "pyproject.toml": "[tool.rankcheck]\n",
    "train.py": """\
        import torch.distributed as dist

        from pkg.steps import step


        def main(t):
            if dist.get_rank() == 0:
                step(t)
        """,
    "pkg/__init__.py": "",
    # steps.py and helpers.py name nothing from the catalog: only the fixpoint finds them.
    "pkg/steps.py": """\
        from pkg.helpers import inner


        def step(t):
            inner(t)
        """,
    "pkg/helpers.py": """\
        from pkg.comm import sync_all as sync


        def inner(t):
            return sync(t)
        """,
    "pkg/comm.py": """\
        import torch.distributed as dist


        def sync_all(t):
            dist.all_reduce(t)
        """,
    "pkg/unrelated.py": """\
        def parse(text):
            return text.split(",")
        """,
}


def test_collective_three_modules_away_is_still_found(tmp_path: Path, monkeypatch) -> None:
    write_tree(tmp_path, THREE_AWAY)
    monkeypatch.chdir(tmp_path)
    without = _check(monkeypatch, False, ["train.py"], root=tmp_path)
    with_ = _check(monkeypatch, True, ["train.py"], root=tmp_path)
    assert _findings(with_) == _findings(without)
    assert [(f.code, f.location.path, f.location.line) for f in with_.findings] == [("RC101", "train.py", 8)]
    chain = [step.callee for step in with_.findings[0].chain]
    assert any("sync_all" in c or "all_reduce" in c for c in chain), chain

    stats = PipelineStats()
    files = discover([tmp_path / "train.py"], tmp_path)
    collect_summaries(files, {}, load_catalog(), PipelineOptions(prefilter=True, dense_share=float("inf")), stats)
    # helpers.py for naming `sync_all` of comm.py, steps.py for what main passes to it
    assert stats.rounds >= 1
    assert stats.minimal_used == 2  # pkg/__init__.py and pkg/unrelated.py were never parsed


def test_rank_helper_and_reexport_through_package_init(tmp_path: Path, monkeypatch) -> None:
    """A rank test in a helper, re-exported by a package __init__ that names nothing itself."""
    write_tree(
        tmp_path,
        {
            "pyproject.toml": "",
            "train.py": """\
                from pkg import is_main, save


                def end_of_epoch(model):
                    if is_main():
                        save(model)
                """,
            "pkg/__init__.py": "from pkg.util import is_main\nfrom pkg.ckpt import save\n",
            "pkg/util.py": """\
                import torch.distributed as dist


                def is_main():
                    return dist.get_rank() == 0
                """,
            "pkg/ckpt.py": """\
                from pkg.comm import dist


                def save(model):
                    dist.barrier()
                """,
            "pkg/comm.py": "import torch.distributed as dist\n",
        },
    )
    monkeypatch.chdir(tmp_path)
    without = _check(monkeypatch, False, ["train.py"], root=tmp_path)
    with_ = _check(monkeypatch, True, ["train.py"], root=tmp_path)
    assert _findings(with_) == _findings(without)
    assert [(f.code, f.location.line) for f in with_.findings] == [("RC101", 6)]


def test_skipped_reported_files_keep_rc001_and_suppressions(tmp_path: Path, monkeypatch) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": "",
            "broken.py": "def f(:\n    pass\n",
            "quiet.py": "x = 1  # noqa: RC101\n",
            "py312.py": "type Alias = list[int]\n",  # 3.12 syntax: compile() may refuse, libcst parses it
        },
    )
    monkeypatch.chdir(tmp_path)
    runs = {}
    for flag in (False, True):
        result = _check(monkeypatch, flag, ["."], root=tmp_path, warn_unused_ignores=True)
        runs[flag] = [(f.code, f.location.path, f.location.line, f.location.column, f.message) for f in result.findings]
    assert runs[True] == runs[False]
    expected = runs[False]
    assert ("RC001", "broken.py") in [(c, p) for c, p, *_ in expected]
    assert ("RC003", "quiet.py") in [(c, p) for c, p, *_ in expected]
    assert "py312.py" not in [p for _, p, *_ in expected]


def test_corpus_group_as_one_project_gives_the_same_findings(monkeypatch, shared_cache: Path) -> None:
    """Every file of corpus/core reported at once, the whole group as context."""
    root = CORPUS / "core"
    kwargs = dict(root=root, use_cache=True, cache_dir=shared_cache)
    without = _findings(_check(monkeypatch, False, [root], **kwargs))
    with_ = _findings(_check(monkeypatch, True, [root], **kwargs))
    assert with_ == without and without


def test_default_parses_everything_when_the_catalog_names_most_of_the_source(tmp_path: Path) -> None:
    write_tree(tmp_path, THREE_AWAY)
    files = discover([tmp_path / "train.py"], tmp_path)
    dense = PipelineStats()
    collect_summaries(files, {}, load_catalog(), PipelineOptions(prefilter=True, dense_share=0.1), dense)
    assert dense.dense and dense.minimal_used == 0 and dense.rounds == 0
    sparse = PipelineStats()
    collect_summaries(files, {}, load_catalog(), PipelineOptions(prefilter=True, dense_share=0.9), sparse)
    assert not sparse.dense and sparse.minimal_used == 2
