"""Every node the lowering builds has the shape rankcheck.program.ir declares for it: the IR's
tuples are documented once, as shapes, and cannot drift from the code that builds them."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Tuple

import pytest
from corpus_support import CORPUS

import rankcheck.frontend.lower as lower
import rankcheck.program.ir as ir
from rankcheck.frontend.lower import summarize_source
from rankcheck.program.ir import SHAPES, CallSite, FunctionSummary, ModuleSummary

FILES = sorted(CORPUS.rglob("*.py"))


def _typed_nodes(fn: FunctionSummary) -> Iterator[Tuple[str, tuple]]:
    """(kind, node) for every node of a function's body and call sites, its kind known from where
    it stands."""
    def stmt(node: tuple) -> Iterator[Tuple[str, tuple]]:
        yield "stmt", node
        tag = node[0]
        if tag in ("expr",):
            yield from expr(node[1])
        elif tag == "assign":
            for target in node[1]:
                yield from tgt(target)
            yield from expr(node[2])
        elif tag == "augassign":
            yield from tgt(node[1])
            yield from expr(node[2])
        elif tag in ("if", "while"):
            yield from expr(node[1])
            for part in (node[2], node[3]):
                for sub in part:
                    yield from stmt(sub)
        elif tag == "for":
            yield from tgt(node[1])
            yield from expr(node[2])
            for part in (node[3], node[4]):
                for sub in part:
                    yield from stmt(sub)
        elif tag == "exit" and node[2] is not None:
            yield from expr(node[2])
        elif tag == "with":
            for value, target in node[1]:
                yield from expr(value)
                if target is not None:
                    yield from tgt(target)
            for sub in node[2]:
                yield from stmt(sub)
        elif tag == "try":
            for part in (node[1], *(h[2] for h in node[2]), node[3], node[4]):
                for sub in part:
                    yield from stmt(sub)
        elif tag == "match":
            yield from expr(node[1])
            for pattern, guard, body, _ in node[2]:
                yield from pat(pattern)
                if guard is not None:
                    yield from expr(guard)
                for sub in body:
                    yield from stmt(sub)

    def expr(node: tuple) -> Iterator[Tuple[str, tuple]]:
        yield "expr", node
        tag = node[0]
        if tag == "attr":
            yield from expr(node[1])
        elif tag == "cmp":
            for part in node[2]:
                yield from expr(part)
        elif tag in ("not", "yield"):
            yield from expr(node[1])
        elif tag == "bool":
            for part in node[2]:
                yield from expr(part)
        elif tag == "ifexp":
            for part in node[1:4]:
                yield from expr(part)
        elif tag == "subscript":
            yield from expr(node[1])
            for part in node[2]:
                yield from expr(part)
        elif tag == "comp":
            for target, iterable, conditions in node[1]:
                yield from tgt(target)
                yield from expr(iterable)
                for condition in conditions:
                    yield from expr(condition)
            for part in node[2]:
                yield from expr(part)
        elif tag == "walrus":
            yield from expr(node[2])
        elif tag in ("op", "tuple"):
            for part in node[1]:
                yield from expr(part)
        elif tag == "dict":
            for key, value in node[1]:
                if key is not None:
                    yield from expr(key)
                yield from expr(value)

    def tgt(node: tuple) -> Iterator[Tuple[str, tuple]]:
        yield "target", node
        if node[0] == "unpack":
            for part in node[1]:
                yield from tgt(part)
        elif node[0] == "other":
            yield from expr(node[1])

    def pat(node: tuple) -> Iterator[Tuple[str, tuple]]:
        yield "pattern", node
        if node[0] == "or":
            for part in node[1]:
                yield from pat(part)
        elif node[0] == "value":
            yield from expr(node[1])

    def site(call: CallSite) -> Iterator[Tuple[str, tuple]]:
        yield "ref", call.callee
        if call.callee[0] in ("attr", "value"):
            yield from expr(call.callee[1])
        for arg in call.args:
            yield from expr(arg)
        for _, arg in call.kwargs:
            yield from expr(arg)

    for node in fn.body:
        yield from stmt(node)
    for call in fn.calls:
        yield from site(call)


def _summaries() -> Iterator[ModuleSummary]:
    for path in FILES:
        yield summarize_source(path.read_text(encoding="utf-8"), str(path), path.stem)


@pytest.mark.slow
def test_every_node_the_lowering_builds_has_its_declared_shape() -> None:
    seen = set()
    for summary in _summaries():
        for fn in summary.functions:
            for kind, node in _typed_nodes(fn):
                shape = SHAPES.get((kind, node[0]))
                assert shape is not None, (summary.path, kind, node)
                assert len(node) == 1 + len(shape.fields), (summary.path, shape, node)
                seen.add((kind, node[0]))
    assert len(seen) > 30


def test_every_declared_shape_is_built_by_the_lowering() -> None:
    """A shape nothing builds is a dead declaration."""
    source = Path(lower.__file__).read_text(encoding="utf-8")
    for name, value in vars(ir).items():
        if isinstance(value, ir.Shape):
            assert f"{name}.make(" in source, name


@pytest.mark.parametrize("key", sorted(SHAPES), ids=["-".join(k) for k in sorted(SHAPES)])
def test_each_shape_is_documented(key) -> None:
    assert SHAPES[key].doc
