"""Re-parsing an edited buffer where it changed (rankcheck/reparse.py) gives what a full parse
gives: the same tree (node for node, and the same code), the same position for every node, and
so the same summary; over generated edits of every corpus file, typed one after the other as in
an editor, and on the texts where lines are counted differently (CRLF, lone CR, form feeds, no
final newline, a byte order mark)."""

from __future__ import annotations

import random
import re
from typing import Iterator, List, Tuple

import libcst as cst
import pytest
from corpus_support import CORPUS

from rankcheck.frontend.lower import summarize_source
from rankcheck.frontend.parse import parse_module
from rankcheck.frontend.positions import node_ranges
from rankcheck.frontend.reparse import RecentParses

CORPUS_FILES = sorted(p for p in CORPUS.rglob("*.py") if "__pycache__" not in p.parts)


def _pairs(a: cst.CSTNode, b: cst.CSTNode) -> Iterator[Tuple[cst.CSTNode, cst.CSTNode]]:
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        yield x, y
        stack.extend(zip(x.children, y.children))


def assert_same_as_a_full_parse(parses: RecentParses, key: str, text: str) -> bool:
    """What `parses` gives for `text`, then remembers as `summarize_source` does, against a full
    parse: the tree, its code, every node's range and the summary. Returns whether `text` parses."""
    try:
        full = parse_module(text)
    except cst.ParserSyntaxError as expected:
        with pytest.raises(cst.ParserSyntaxError) as raised:
            parses.parse(key, text)
        assert str(raised.value) == str(expected)
        return False
    module, ranges = parses.parse(key, text)
    assert module.deep_equals(full) and module.code == full.code
    full_ranges = node_ranges(full)
    if ranges is None:
        ranges = node_ranges(module)
    for mine, theirs in _pairs(module, full):
        assert ranges.get(id(mine)) == full_ranges.get(id(theirs)), (type(mine).__name__, text)
    parses.remember(key, text, module, ranges)
    return True


def _edit(text: str, rng: random.Random) -> str:
    """One edit as typed: a line added, removed or changed, at any indentation, anywhere."""
    lines = text.splitlines(keepends=True)
    at = rng.randrange(len(lines) + 1)
    near = lines[min(at, len(lines) - 1)] if lines else ""
    indent = near[: len(near) - len(near.lstrip(" \t"))]
    kind = rng.randrange(9)
    if kind == 0:
        lines.insert(at, f"{indent}edited = {at}\n")
    elif kind == 1 and lines:
        del lines[min(at, len(lines) - 1)]
    elif kind == 2 and lines:
        line = lines[min(at, len(lines) - 1)]
        lines[min(at, len(lines) - 1)] = line.rstrip("\r\n") + "  # noted\n"
    elif kind == 3:
        lines.insert(at, "\n")
    elif kind == 4:
        lines.insert(at, "# a comment at the margin\n")
    elif kind == 5:
        lines.insert(at, f"{indent}# a comment\n")
    elif kind == 6:
        lines.insert(at, "def typed_at_the_margin():\n    return 1\n")
    elif kind == 7:
        lines.insert(at, f"{indent}if (\n")  # half typed: the file stops parsing
    elif lines:
        line = lines[min(at, len(lines) - 1)]
        lines[min(at, len(lines) - 1)] = re.sub(r"\w+", "renamed", line, count=1)
    return "".join(lines)


@pytest.mark.parametrize("chunk", range(4))
@pytest.mark.slow
def test_edits_typed_into_corpus_files_parse_as_a_full_parse(chunk: int) -> None:
    rng = random.Random(chunk)
    parses = RecentParses()
    spliceable = spliced = 0  # edits of a text that parsed into one that parses; those spliced
    for path in CORPUS_FILES[chunk::8]:  # half the corpus files, a quarter in each
        original = path.read_text(encoding="utf-8")
        text = original
        parsed = assert_same_as_a_full_parse(parses, str(path), text)
        for _ in range(5):  # one edit after the other, as typed
            text = _edit(text, rng)
            splices_before, parsed_before = parses.spliced, parsed
            parsed = assert_same_as_a_full_parse(parses, str(path), text)
            if parsed and parsed_before:
                spliceable += 1
                spliced += parses.spliced - splices_before
        assert_same_as_a_full_parse(parses, str(path), original)  # and back (undo)
    # Many edits stay inside a statement: much of the comparison above was of splices (52-67% of
    # the edits a splice can serve, from a text that parses to one that parses; after a half-typed
    # line the file does not parse, and the sample moves as the corpus grows).
    assert spliced > spliceable // 3, (spliced, spliceable)


LINE_ENDINGS = {
    "crlf": "\r\n",
    "lone cr": "\r",
}


def _sample() -> str:
    return (
        "import torch.distributed as dist\n"
        "\n"
        "\n"
        "@decorated\n"
        "@decorated_too(\n"
        "    1)\n"
        "def step(rank):\n"
        "    if rank == 0:\n"
        "        dist.all_reduce(x)\n"
        "    # trailing comment inside\n"
        "\n"
        "# a comment between\n"
        "class Trainer:\n"
        "    def fit(self):\n"
        "        dist.barrier()\n"
    )


def _sample_edits(text: str, newline: str = "\n") -> List[str]:
    return [
        text.replace("dist.all_reduce(x)", "dist.all_reduce(y)"),
        text.replace("dist.barrier()", f"dist.barrier(){newline}        dist.barrier()"),
        text.replace("@decorated_too(", "@decorated_three("),
        text.replace("# a comment between", "# a changed comment between"),
        text.replace(f"class Trainer:{newline}", f"x = 1{newline}class Trainer:{newline}"),
        text.replace("    def fit", f"{newline}    def fit"),
        text.replace("rank == 0:", "rank == 0"),  # stops parsing
        text.rstrip("\r\n"),  # no final line ending
    ]


@pytest.mark.parametrize("ending", ["lf", *LINE_ENDINGS])
def test_line_endings(ending: str) -> None:
    newline = LINE_ENDINGS.get(ending, "\n")
    base = _sample().replace("\n", newline)
    for edited in _sample_edits(base, newline):
        parses = RecentParses()
        assert_same_as_a_full_parse(parses, "m.py", base)
        assert_same_as_a_full_parse(parses, "m.py", edited)
        assert_same_as_a_full_parse(parses, "m.py", base)


def test_form_feeds_and_a_byte_order_mark_do_not_shift_lines() -> None:
    """`str.splitlines` splits on a form feed, the tokenizer does not: lines are counted as it does."""
    base = _sample().replace("# a comment between\n", "\x0c# a comment between\n").replace("    def fit", "\x0c    def fit")
    for text in (base, "\ufeff" + base):
        for edited in _sample_edits(text):
            parses = RecentParses()
            assert_same_as_a_full_parse(parses, "m.py", text)
            assert_same_as_a_full_parse(parses, "m.py", edited)


def test_an_edit_inside_a_function_parses_only_its_statement() -> None:
    parses = RecentParses()
    text = _sample()
    assert_same_as_a_full_parse(parses, "m.py", text)
    assert_same_as_a_full_parse(parses, "m.py", text.replace("dist.barrier()", "dist.barrier(group)"))
    assert parses.spliced == 1
    # between statements: the whole text is parsed again
    assert_same_as_a_full_parse(parses, "m.py", text.replace("\n\n# a comment", "\n\n\n# a comment"))
    assert parses.spliced == 1


@pytest.mark.slow
def test_summaries_of_an_editing_session_are_those_of_full_parses() -> None:
    rng = random.Random(7)
    parses = RecentParses()
    for path in CORPUS_FILES[::9]:
        text = path.read_text(encoding="utf-8")
        for _ in range(4):
            text = _edit(text, rng)
            assert summarize_source(text, str(path), "m", parses=parses) == summarize_source(text, str(path), "m")
    assert parses.spliced > 0
