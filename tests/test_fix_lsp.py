"""The fixes in the editor, over real stdio: each fix a `quickfix` code action beside the `# noqa`
one, and `source.fixAll.rankcheck` for the whole buffer. Applying what the server sends makes
the findings go away."""

from __future__ import annotations

from typing import List

import pytest
from lsprotocol import types
from test_lsp import lsp, nothing  # noqa: F401  (the server fixture, shared)

pytestmark = [pytest.mark.lsp, pytest.mark.slow]

TWO_FIXES = """\
import torch.distributed as dist


def compute(t):
    dist.all_reduce(t)
    return t.mean()


def step(t, u, log):
    rank = dist.get_rank()
    if rank == 0:
        metrics = compute(t)
        log.info(metrics)
    if rank == 0:
        dist.all_reduce(u)  # the sum, for the log
        print(u)
    return rank
"""
FIRST_CALL_LINE = 11  # 0-based line of `metrics = compute(t)`


def apply(text: str, edits: List[types.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        return sum(len(line) for line in lines[: position.line]) + position.character

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def rc101_twice(diags) -> bool:
    return sorted((str(d.code), d.range.start.line) for d in diags) == [("RC101", FIRST_CALL_LINE), ("RC101", 14)]


@pytest.mark.asyncio
async def test_a_finding_with_a_fix_offers_it_beside_noqa_and_applying_it_clears_the_finding(lsp):  # noqa: F811
    uri = lsp.open("direct.py", TWO_FIXES)
    diags = await lsp.diagnostics("direct.py", rc101_twice, "two RC101")
    first = next(d for d in diags if d.range.start.line == FIRST_CALL_LINE)
    actions = await lsp.client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=first.range,
        context=types.CodeActionContext(diagnostics=[first]),
    ))
    kinds = [(a.kind, a.is_preferred) for a in actions]
    assert kinds == [(types.CodeActionKind.QuickFix, True), (types.CodeActionKind.QuickFix, False), ("source.fixAll.rankcheck", None)]
    fix, noqa, _ = actions
    assert fix.title.startswith("Call `compute()` on every rank, before `if rank == 0:`")
    assert "RC101" in noqa.title
    fixed = apply(TWO_FIXES, fix.edit.changes[uri])
    assert "    metrics = compute(t)\n    if rank == 0:\n        log.info(metrics)\n" in fixed
    lsp.change("direct.py", fixed)
    await lsp.diagnostics("direct.py", lambda ds: [(str(d.code), d.range.start.line) for d in ds] == [("RC101", 14)], "one RC101 left")


@pytest.mark.asyncio
async def test_fix_all_applies_every_safe_fix_of_the_buffer(lsp):  # noqa: F811
    uri = lsp.open("direct.py", TWO_FIXES)
    await lsp.diagnostics("direct.py", rc101_twice, "two RC101")
    actions = await lsp.client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        context=types.CodeActionContext(diagnostics=[], only=["source.fixAll"]),
    ))
    (action,) = actions
    assert action.kind == "source.fixAll.rankcheck"
    edits = action.edit.changes[uri]
    assert len(edits) == 2
    fixed = apply(TWO_FIXES, edits)
    compile(fixed, "direct.py", "exec")
    assert "    dist.all_reduce(u)  # the sum, for the log\n    if rank == 0:\n        print(u)\n" in fixed
    # A buffer edited since the analysis gets no stale rewrite: the lines no longer match (asked
    # at once, before the debounced analysis of the edit has run).
    lsp.change("direct.py", "# moved down a line\n" + TWO_FIXES)
    stale = await lsp.client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        context=types.CodeActionContext(diagnostics=[], only=["source.fixAll.rankcheck"]),
    ))
    assert not stale

    lsp.change("direct.py", fixed)
    await lsp.diagnostics("direct.py", nothing, "every finding fixed")
