"""rankcheck's own position pass and text slicing give exactly what libcst's PositionProvider and
code generation give: every node's range, and every module summary built from them (also against
libcst's own parse, which checks every node it builds)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Tuple

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

import rankcheck.frontend.lower as lower
from rankcheck.frontend.parse import parse_unvalidated
from rankcheck.frontend.positions import node_ranges
from rankcheck.frontend.scopes import BindingCollector

ROOT = Path(__file__).resolve().parent.parent

# Shapes where positions and texts are easy to get wrong: line ends of every kind, tabs, non-ASCII
# text before a node, parentheses around a guard, comments inside expressions, semicolons,
# decorators, compound statements whose end comes from their body, walrus bindings.
TRICKY = {
    "crlf": "import torch.distributed as dist\r\n\r\ndef f(t):\r\n    if dist.get_rank() == 0:\r\n        dist.all_reduce(t)\r\n",
    "lone_cr": "import torch.distributed as dist\r\rdef f(t):\r    if dist.get_rank() == 0:\r        dist.barrier()\r",
    "form_feed_between_defs": "import torch.distributed as dist\n\x0c\ndef f(t):\n    if dist.get_rank() == 0:\n        dist.barrier()\n",
    "tabs": "import torch.distributed as dist\ndef f(t):\n\tif dist.get_rank() == 0:\n\t\tdist.all_reduce(t, op=dist.ReduceOp.SUM)\n",
    "non_ascii": "import torch.distributed as dist\ndef f(t):\n    naïve = 'héllo wörld ✓'; r = dist.get_rank()\n    if r == 0: dist.broadcast(t, src=0)  # ✓\n",
    "parenthesized": (
        "import torch.distributed as dist\n"
        "def f(t, xs):\n"
        "    if ((dist.get_rank()\n"
        "         == 0)):  # comment\n"
        "        dist.all_reduce((t),  # inside\n"
        "                        op = ( dist.ReduceOp.MAX ))\n"
        "    for x in (xs):\n"
        "        raise (ValueError('x')); y = 1\n"
    ),
    "decorated_and_compound": (
        "import functools\nimport torch.distributed as dist\n\n"
        "@functools.lru_cache(maxsize=None)\n@staticmethod\n"
        "def g(t):\n"
        "    try:\n        dist.barrier()\n    except (RuntimeError, ValueError) as e:  # why\n        pass\n"
        "    finally:\n        pass\n"
        "    with open('x') as fh, dist.no_sync():\n        dist.barrier()\n"
        "    while dist.get_rank():\n        break\n    else:\n        pass\n"
        "    lam = lambda x: dist.all_reduce(x)\n"
        "    match dist.get_rank():\n        case 0 | 1 if t:\n            dist.barrier()\n        case _:\n            pass\n"
    ),
    "walrus": "import torch.distributed as dist\ndef f(t):\n    if (r := dist.get_rank()) == 0:\n        dist.barrier()\n    return [y := 1 for _ in t]\n",
}


def _reference_ranges(module: cst.Module) -> Dict[int, Tuple[int, int, int, int]]:
    found = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {id(node): (r.start.line, r.start.column, r.end.line, r.end.column) for node, r in found.items()}


def _sources() -> List[Tuple[str, str]]:
    out = sorted(TRICKY.items())
    for folder in ("corpus", "rankcheck"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            out.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    return out


SOURCES = _sources()


@pytest.mark.slow
def test_every_syntactic_range_equals_position_provider() -> None:
    compared = 0
    for name, text in SOURCES:
        module = cst.parse_module(text)
        mine = node_ranges(module)
        theirs = _reference_ranges(module)
        for key, value in mine.items():
            assert theirs[key] == value, name
            compared += 1
        # Every node with a syntactic position of its own is covered (the rest are whitespace).
        uncovered = {type(n).__name__ for n in _all_nodes(module) if id(n) not in mine and hasattr(n, "lpar")}
        assert not uncovered, (name, uncovered)
    assert compared > 50_000


def _all_nodes(module: cst.Module) -> List[cst.CSTNode]:
    out: List[cst.CSTNode] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            out.append(node)
            return True

    module.visit(Collect())
    return out


@pytest.mark.slow
def test_summaries_equal_those_built_the_generic_way(monkeypatch) -> None:
    fast = {name: lower.summarize_source(text, name, "m") for name, text in SOURCES}
    # summarize_source as it was: libcst's own parse (every node checked as it is built),
    # PositionProvider, generated code for every text, the generic visitor for bindings.
    monkeypatch.setattr(lower, "parse_module", cst.parse_module)
    monkeypatch.setattr(lower, "node_ranges", _reference_ranges)
    monkeypatch.setattr(lower._ModuleBuilder, "code_for", lambda self, node: self.cst_module.code_for_node(node))
    monkeypatch.setattr(BindingCollector, "collect", lambda self, body: [stmt.visit(self) for stmt in body])
    for name, text in SOURCES:
        assert lower.summarize_source(text, name, "m") == fast[name], name


def test_the_parse_leaves_node_checks_on_for_everything_else() -> None:
    assert parse_unvalidated("x = 1\n").code == "x = 1\n"
    with pytest.raises(cst.ParserSyntaxError):
        parse_unvalidated("def (:\n")
    # After a parse, and after one that failed, a node built by hand is still checked.
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
