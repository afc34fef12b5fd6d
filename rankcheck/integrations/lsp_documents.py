"""What the language server publishes: the open buffers analysed against the whole workspace.

Kept apart from the pygls wiring in `rankcheck.integrations.lsp_server` so that the policy reads in one place:
- every open buffer's unsaved text replaces its file on disk (`check_paths(sources=...)`), and
  the call graph comes from the workspace root, so an edit in `metrics.py` changes what is
  reported in `train.py`;
- a buffer that does not parse keeps the diagnostics of its last parsable text, moved with the
  lines the edits since then moved (`moved_diagnostics`), plus the RC001 diagnostic; the other buffers are analysed against that last parsable text, so a half-typed
  line in one file does not make findings in another blink;
- an analysis that raises publishes nothing new (the previous diagnostics stay) and reports the
  error through the log instead of taking the server down.
This module never runs user code: it only calls the static analyzer.
"""

from __future__ import annotations

import difflib
import os
import re
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Callable

from rankcheck.fix import attach_fixes
from rankcheck.ftypes import Finding
from rankcheck.report.lsp_format import (
    UTF16,
    SourceTexts,
    diagnostic,
    path_uri,
    read_disk_text,
)
from rankcheck.rules_meta import get_rule, known_code

PYTHON_SUFFIXES = (".py", ".pyi")

CheckPaths = Callable[..., "list[Finding]"]


@dataclass(frozen=True)
class OpenDocument:
    uri: str
    path: str  # absolute file system path
    text: str
    version: int | None = None


@dataclass
class PublishedState:
    """Per open document: the last diagnostics computed from text that parsed, and that text.
    Per workspace root: the analyzer's memory between edits (summaries, program, memo)."""

    good_diagnostics: dict[str, list[dict]] = field(default_factory=dict)
    good_text: dict[str, str] = field(default_factory=dict)
    workspaces: dict = field(default_factory=dict)

    def workspace(self, root: str | None):
        from rankcheck.driver.workspace import Workspace

        if root not in self.workspaces:
            self.workspaces[root] = Workspace()
        return self.workspaces[root]

    def forget_except(self, open_uris: set[str]) -> None:
        for table in (self.good_diagnostics, self.good_text):
            for uri in [u for u in table if u not in open_uris]:
                del table[uri]


@dataclass
class AnalysisOutcome:
    diagnostics: dict[str, list[dict]]  # uri -> diagnostics to publish (absent: leave as is)
    log: list[str]  # messages for window/logMessage
    failed: bool = False
    # Files that are not open but carry a tool diagnostic (RC002 in pyproject.toml): editors list
    # these in their problems view, so a broken configuration does not fail silently.
    elsewhere: set[str] = field(default_factory=set)


def file_key(path: str) -> str:
    return os.path.normcase(os.path.realpath(os.path.abspath(path)))


def is_python(path: str) -> bool:
    return path.endswith(PYTHON_SUFFIXES)


def workspace_root_for(path: str, roots: Sequence[str]) -> str | None:
    """The deepest workspace folder holding `path`, or None (then the analyzer finds the root)."""
    key = file_key(path)
    best: str | None = None
    for root in roots:
        root_key = file_key(root)
        inside = key == root_key or key.startswith(root_key.rstrip(os.sep) + os.sep)
        if inside and (best is None or len(root_key) > len(file_key(best))):
            best = root
    return best


def _is_parse_failure(finding: Finding) -> bool:
    return known_code(finding.code) and get_rule(finding.code).name == "unparsable-file"


def _default_check_paths(*args, **kwargs):
    from rankcheck import check_paths

    return check_paths(*args, **kwargs)


def analyse_documents(
    documents: Sequence[OpenDocument],
    roots: Sequence[str],
    state: PublishedState,
    *,
    encoding: str = UTF16,
    check_paths: CheckPaths = _default_check_paths,
) -> AnalysisOutcome:
    """Analyse every open Python document and decide what to publish for each."""
    documents = [d for d in documents if is_python(d.path)]
    state.forget_except({d.uri for d in documents})
    outcome = AnalysisOutcome(diagnostics={}, log=[])
    if not documents:
        return outcome

    by_key = {file_key(d.path): d for d in documents}
    sources = {os.path.abspath(d.path): d.text for d in documents}
    groups: dict[str | None, list[OpenDocument]] = {}
    for doc in documents:
        groups.setdefault(workspace_root_for(doc.path, roots), []).append(doc)

    def run(group: list[OpenDocument], root: str | None, texts: dict[str, str]) -> list[Finding]:
        started = time.perf_counter()
        # The workspace keeps the summaries, the linked program and the interpreter's memo from
        # the last run: an edit re-summarizes the edited buffer and interprets again only what
        # read the edited code; only what can change the open files' findings is analysed.
        findings = check_paths([os.path.abspath(d.path) for d in group], root=root, sources=texts, use_cache=True,
                               cache_dir=os.environ.get("RANKCHECK_CACHE_DIR") or None,
                               workspace=state.workspace(root))
        elapsed = (time.perf_counter() - started) * 1000
        outcome.log.append(f"rankcheck: analysed {len(group)} open file(s) under {root or '(auto)'}"
                           f" in {elapsed:.0f} ms: {len(findings)} finding(s)")
        return attach_fixes(findings, _reader(texts))  # the code actions' rewrites, on the buffers

    def parse_failures(doc: OpenDocument, root: str | None) -> list[Finding]:
        """The buffer's RC001 alone (the buffer by itself: no project, no analysis)."""
        path = os.path.abspath(doc.path)
        findings = check_paths([path], root=root, sources={path: doc.text}, context=False)
        return [f for f in findings if _is_parse_failure(f)]

    for root, group in groups.items():
        try:
            # A buffer that does not compile and has a last parsable text: the project is analysed
            # with that text standing in (a half-typed line changes nothing elsewhere, and the
            # analyzer's memory stays as it was), the buffer gets its parse error.
            typed: dict[str, list[Finding]] = {}
            for doc in group:
                if doc.uri in state.good_text and doc.text != state.good_text[doc.uri] and not _compiles(doc.text):
                    failures = parse_failures(doc, root)
                    if failures:
                        typed[doc.uri] = failures
            first = {**sources, **{os.path.abspath(d.path): state.good_text[d.uri] for d in group if d.uri in typed}}
            findings = run(group, root, first)
        except Exception:
            outcome.failed = True
            outcome.log.append("rankcheck: analysis failed; keeping the previous diagnostics\n"
                               + traceback.format_exc())
            continue
        per_doc = _split_by_document(findings, by_key)
        per_doc.update(typed)
        _add_tool_diagnostics_elsewhere(findings, by_key, sources, encoding, outcome)
        broken = {uri for uri, fs in per_doc.items() if any(_is_parse_failure(f) for f in fs)}

        # Re-run the others against the last parsable text of the broken buffers found only now.
        stand_ins = {
            os.path.abspath(d.path): state.good_text[d.uri]
            for d in documents
            if d.uri in broken and d.uri not in typed and d.uri in state.good_text
        }
        if stand_ins and any(d.uri not in broken for d in group):
            try:
                rerun = _split_by_document(run(group, root, {**first, **stand_ins}), by_key)
                for uri in per_doc:
                    if uri not in broken:
                        per_doc[uri] = rerun.get(uri, [])
            except Exception:
                outcome.log.append("rankcheck: analysis with the last parsable text failed\n"
                                   + traceback.format_exc())

        texts = SourceTexts(_reader({**sources}))
        for doc in group:
            fresh = [diagnostic(f, texts, encoding) for f in per_doc.get(doc.uri, [])]
            if doc.uri in broken:
                parse_errors = [d for f, d in zip(per_doc[doc.uri], fresh) if _is_parse_failure(f)]
                kept = moved_diagnostics(state.good_diagnostics.get(doc.uri, []), state.good_text.get(doc.uri, doc.text), doc.text,
                                         doc.uri)
                outcome.diagnostics[doc.uri] = kept + parse_errors
            else:
                state.good_diagnostics[doc.uri] = fresh
                state.good_text[doc.uri] = doc.text
                outcome.diagnostics[doc.uri] = fresh
    return outcome


_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # what LSP counts as a line break


def line_map(old_text: str, new_text: str) -> Callable[[int], tuple[int, bool] | None]:
    """Where each 0-based line of `old_text` is in `new_text`, and whether it is unchanged: lines
    the edits left alone move by what was inserted or deleted above them; a line in a block
    replaced by one of the same size (typing inside lines) keeps its place in it; a line in a
    block deleted or replaced by one of another size has none (None)."""
    old_lines, new_lines = _LINE_BREAK.split(old_text), _LINE_BREAK.split(new_text)
    blocks = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            blocks.append((i1, i2, j1, tag == "equal"))

    def where(line: int) -> tuple[int, bool] | None:
        for i1, i2, j1, unchanged in blocks:
            if i1 <= line < i2:
                return j1 + line - i1, unchanged
        return None

    return where


def moved_diagnostics(diagnostics: list[dict], old_text: str, new_text: str, uri: str) -> list[dict]:
    """The diagnostics computed on `old_text`, placed on `new_text` (`line_map`): a diagnostic
    whose line went away is dropped (it comes back, or not, once the buffer parses again), and
    so is a related location in this buffer whose line went away, and the `# noqa` edit of a
    line that changed."""
    if old_text == new_text:
        return diagnostics
    where = line_map(old_text, new_text)

    def moved_range(rng: dict, unchanged_only: bool = False) -> dict | None:
        start, end = where(rng["start"]["line"]), where(rng["end"]["line"])
        if start is None or (unchanged_only and not (start[1] and end is not None and end[1])):
            return None
        last = end[0] if end is not None else start[0]
        return {"start": {**rng["start"], "line": start[0]}, "end": {**rng["end"], "line": max(last, start[0])}}

    out = []
    for diag in diagnostics:
        rng = moved_range(diag["range"])
        if rng is None:
            continue
        moved = {**diag, "range": rng}
        if "relatedInformation" in diag:
            related = []
            for info in diag["relatedInformation"]:
                location = info["location"]
                info_range = moved_range(location["range"]) if location["uri"] == uri else location["range"]
                if info_range is not None:
                    related.append({**info, "location": {**location, "range": info_range}})
            moved["relatedInformation"] = related
        fix = (diag.get("data") or {}).get("suppression")
        if fix is not None:
            data = dict(diag["data"])
            edit_range = moved_range(fix["edit"]["range"], unchanged_only=True) if "edit" in fix else None
            if edit_range is None:
                del data["suppression"]  # no safe edit on a line that changed: back when it parses
            else:
                data["suppression"] = {**fix, "line": edit_range["start"]["line"], "edit": {**fix["edit"], "range": edit_range}}
            moved["data"] = data
        out.append(moved)
    return out


def _compiles(text: str) -> bool:
    from rankcheck.frontend.guard import python_compiles

    return python_compiles(text, "<buffer>")


def _is_tool_diagnostic(finding: Finding) -> bool:
    return known_code(finding.code) and get_rule(finding.code).family == "tool"


def _add_tool_diagnostics_elsewhere(
    findings: Sequence[Finding],
    by_key: dict[str, OpenDocument],
    sources: dict[str, str],
    encoding: str,
    outcome: AnalysisOutcome,
) -> None:
    texts = SourceTexts(_reader(sources))
    for finding in findings:
        if file_key(finding.location.path) in by_key or not _is_tool_diagnostic(finding):
            continue
        uri = path_uri(finding.location.path)
        outcome.elsewhere.add(uri)
        outcome.diagnostics.setdefault(uri, []).append(diagnostic(finding, texts, encoding))


def _split_by_document(findings: Sequence[Finding], by_key: dict[str, OpenDocument]) -> dict[str, list[Finding]]:
    per_doc: dict[str, list[Finding]] = {doc.uri: [] for doc in by_key.values()}
    for finding in findings:
        doc = by_key.get(file_key(finding.location.path))
        if doc is not None:
            per_doc[doc.uri].append(finding)
    return per_doc


def _reader(buffers: dict[str, str]) -> Callable[[str], str | None]:
    """Read open buffers from memory and everything else from disk."""
    by_key = {file_key(path): text for path, text in buffers.items()}

    def read(abs_path: str) -> str | None:
        text = by_key.get(file_key(abs_path))
        return text if text is not None else read_disk_text(abs_path)

    return read
