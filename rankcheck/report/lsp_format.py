"""`--format lsp`: LSP `Diagnostic` objects as JSON, for editors that run linters as commands.

Output: a JSON array with one `{"uri": ..., "diagnostics": [...]}` entry per file, in the order the
findings come. Positions are 0-based and counted in UTF-16 code units (the LSP default), so the
source line is read to convert rankcheck's code-point columns.

The language server (`rankcheck.integrations.lsp_server`) builds its diagnostics with the same `diagnostics_by_file`,
passing the unsaved buffer texts and the encoding it negotiated with the client, and applies the
suppression fix carried in `Diagnostic.data` with `suppression_edit`.
"""

from __future__ import annotations

import io
import json
import os
import re
import tokenize
from pathlib import Path
from typing import Callable, Optional, Sequence

from rankcheck.ftypes import ERROR, WARNING, Finding, Location
from rankcheck.report import ReportContext
from rankcheck.rules_meta import get_rule, known_code

SOURCE = "rankcheck"

# LSP DiagnosticSeverity / DiagnosticTag / PositionEncodingKind values.
SEVERITY_ERROR = 1
SEVERITY_WARNING = 2
SEVERITY_INFORMATION = 3
TAG_UNNECESSARY = 1
UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"

# A noqa comment, bare or with codes (the flake8/ruff spelling: `noqa: A1, B2` or `A1 B2`).
NOQA_RE = re.compile(
    r"#\s*noqa(?P<colon>:\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE
)

ReadText = Callable[[str], Optional[str]]  # absolute path -> text, or None if unreadable


def render(findings: Sequence[Finding], ctx: ReportContext) -> str:
    published = diagnostics_by_file(findings, read_text=read_disk_text, encoding=UTF16)
    entries = [{"uri": uri, "diagnostics": diags} for uri, diags in published.items()]
    return json.dumps(entries, indent=2) + "\n"


def read_disk_text(abs_path: str) -> Optional[str]:
    try:
        with open(abs_path, encoding="utf-8", errors="replace", newline="") as handle:
            return handle.read()
    except OSError:
        return None


def absolute(path: str) -> str:
    """Finding paths are relative to the working directory (or absolute)."""
    return os.path.abspath(path)


def path_uri(path: str) -> str:
    return Path(absolute(path)).as_uri()


class SourceText:
    """One file's text split into lines, plus the token facts a suppression edit needs."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self._comments: Optional[dict[int, tuple[int, str]]] = None
        self._inside_token: set[int] = set()

    def line(self, index: int) -> Optional[str]:
        """The 0-based line `index`, without its line ending."""
        if 0 <= index < len(self.lines):
            return self.lines[index]
        return None

    def _scan(self) -> None:
        # 0-based line -> (column of `#`, comment text), and the lines whose end lies inside a
        # token (a triple-quoted string): a comment appended there would land in the string.
        comments: dict[int, tuple[int, str]] = {}
        try:
            for tok in tokenize.generate_tokens(io.StringIO("\n".join(self.lines)).readline):
                if tok.type == tokenize.COMMENT:
                    comments[tok.start[0] - 1] = (tok.start[1], tok.string)
                elif tok.start[0] != tok.end[0] and tok.type not in (tokenize.NL, tokenize.NEWLINE):
                    self._inside_token.update(range(tok.start[0] - 1, tok.end[0] - 1))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            # The buffer does not tokenize (mid-edit); fall back to a textual search per line.
            for index, text in enumerate(self.lines):
                if index not in comments:
                    match = NOQA_RE.search(text)
                    if match:
                        comments[index] = (match.start(), text[match.start():])
        self._comments = comments

    def comment(self, index: int) -> Optional[tuple[int, str]]:
        if self._comments is None:
            self._scan()
        assert self._comments is not None
        return self._comments.get(index)

    def ends_inside_token(self, index: int) -> bool:
        if self._comments is None:
            self._scan()
        return index in self._inside_token


def suppression_edit(source: SourceText, index: int, code: str) -> Optional[tuple[int, int, str]]:
    """The edit that makes line `index` (0-based) carry `# noqa: <code>`.

    Returns (start column, end column, new text) in code points on that line, or None when the
    line already suppresses everything or cannot take a comment (its end is inside a string or a
    backslash continuation). Codes merge into an existing `# noqa: ...` instead of adding a second.
    """
    line = source.line(index)
    if line is None or source.ends_inside_token(index):
        return None
    comment = source.comment(index)
    if comment is not None:
        column, text = comment
        match = NOQA_RE.search(text)
        if match is not None:
            if not match.group("colon"):
                return None  # a bare noqa comment already suppresses every code on the line
            codes = [c for c in re.split(r"[,\s]+", match.group("codes")) if c]
            if code.upper() in (c.upper() for c in codes):
                return None
            start = column + match.start()
            return start, column + match.end(), "# noqa: " + ", ".join(codes + [code])
    elif line.rstrip().endswith("\\"):
        return None
    content_end = len(line.rstrip())
    return content_end, len(line), f"  # noqa: {code}"


def code_units(text: str, encoding: str) -> int:
    if encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", errors="surrogatepass"))
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


class SourceTexts:
    """Source texts read once per render (buffers first, then disk)."""

    def __init__(self, read_text: ReadText):
        self._read_text = read_text
        self._cache: dict[str, Optional[SourceText]] = {}

    def get(self, path: str) -> Optional[SourceText]:
        key = absolute(path)
        if key not in self._cache:
            text = self._read_text(key)
            self._cache[key] = SourceText(text) if text is not None else None
        return self._cache[key]


def _position(texts: SourceTexts, path: str, line: int, column: int, encoding: str) -> dict:
    """A 0-based LSP position from a 1-based line and code-point column."""
    index = max(line - 1, 0)
    character = max(column - 1, 0)
    source = texts.get(path)
    text = source.line(index) if source is not None else None
    if text is not None:
        character = code_units(text[:character], encoding)
    return {"line": index, "character": character}


def lsp_range(texts: SourceTexts, loc: Location, encoding: str) -> dict:
    start = _position(texts, loc.path, loc.line, loc.column, encoding)
    if loc.end_line and loc.end_column:
        end = _position(texts, loc.path, loc.end_line, loc.end_column, encoding)
    else:
        # Unknown end: underline to the end of the line (or one character if it can't be read).
        source = texts.get(loc.path)
        text = source.line(start["line"]) if source is not None else None
        width = code_units(text, encoding) if text is not None else start["character"] + 1
        end = {"line": start["line"], "character": max(width, start["character"])}
    return {"start": start, "end": end}


def _severity(finding: Finding) -> int:
    if finding.severity == ERROR:
        return SEVERITY_ERROR
    if finding.severity == WARNING:
        return SEVERITY_WARNING
    return SEVERITY_INFORMATION


def _related(texts: SourceTexts, finding: Finding, encoding: str) -> list[dict]:
    related = []
    guard = finding.guard
    if guard is not None:
        related.append(
            {
                "location": {"uri": path_uri(guard.location.path),
                             "range": lsp_range(texts, guard.location, encoding)},
                "message": f"rank-dependent guard: `{guard.text}`",
            }
        )
        if guard.source is not None:
            src = guard.source
            related.append(
                {
                    "location": {"uri": path_uri(src.location.path),
                                 "range": lsp_range(texts, src.location, encoding)},
                    "message": f"the rank comes from {src.phrase}",
                }
            )
    for number, step in enumerate(finding.chain, start=1):
        message = f"call path {number}/{len(finding.chain)}: {step.callee}"
        if step.note:
            message += f" ({step.note})"
        related.append(
            {
                "location": {"uri": path_uri(step.location.path),
                             "range": lsp_range(texts, step.location, encoding)},
                "message": message,
            }
        )
    return related


def _suppression(texts: SourceTexts, finding: Finding, encoding: str) -> Optional[dict]:
    """What the quick fix needs: the line, the code, and the edit as of the analysed text."""
    if known_code(finding.code) and get_rule(finding.code).family == "tool":
        return None  # a parse error or a bad config cannot be silenced by a comment
    index = max(finding.location.line - 1, 0)
    fix: dict = {
        "title": f"Suppress {finding.code} on this line (# noqa: {finding.code})",
        "line": index,
        "code": finding.code,
        "edit": None,
    }
    source = texts.get(finding.location.path)
    if source is not None:
        edit = suppression_edit(source, index, finding.code)
        if edit is None:
            return None
        start, end, new_text = edit
        line = source.line(index) or ""
        fix["edit"] = {
            "range": {
                "start": {"line": index, "character": code_units(line[:start], encoding)},
                "end": {"line": index, "character": code_units(line[:end], encoding)},
            },
            "newText": new_text,
        }
    return fix


def diagnostic(finding: Finding, texts: SourceTexts, encoding: str = UTF16) -> dict:
    diag: dict = {
        "range": lsp_range(texts, finding.location, encoding),
        "severity": _severity(finding),
        "code": finding.code,
        "source": SOURCE,
        "message": finding.message,
    }
    if known_code(finding.code):
        rule = get_rule(finding.code)
        diag["codeDescription"] = {"href": rule.help_uri}
        if rule.name == "unused-suppression":
            diag["tags"] = [TAG_UNNECESSARY]
    related = _related(texts, finding, encoding)
    if related:
        diag["relatedInformation"] = related
    data: dict = {"name": finding.name}
    fix = _suppression(texts, finding, encoding)
    if fix is not None:
        data["suppression"] = fix
    if finding.verdict:
        data["verdict"] = finding.verdict
    if finding.fix is not None:
        data["fix"] = {
            "title": finding.fix.message,
            "applicability": finding.fix.applicability,
            "edits": [
                {"range": {"start": _position(texts, e.location.path, e.location.line, e.location.column, encoding),
                           "end": _position(texts, e.end.path, e.end.line, e.end.column, encoding)},
                 "newText": e.content,
                 # the lines it replaces as they were: a buffer edited since gets no stale rewrite
                 "replaces": _lines_between(texts, e.location.path, e.location.line, e.end.line)}
                for e in finding.fix.edits
            ],
        }
    diag["data"] = data
    return diag


def _lines_between(texts: SourceTexts, path: str, first: int, stop: int) -> list:
    source = texts.get(path)
    lines = [source.line(i) for i in range(first - 1, stop - 1)] if source is not None else []
    return [line for line in lines if line is not None]


def diagnostics_by_file(
    findings: Sequence[Finding], *, read_text: ReadText = read_disk_text, encoding: str = UTF16
) -> dict[str, list[dict]]:
    """file URI -> LSP diagnostics (plain dicts), in the order the findings come."""
    texts = SourceTexts(read_text)
    published: dict[str, list[dict]] = {}
    for finding in findings:
        uri = path_uri(finding.location.path)
        published.setdefault(uri, []).append(diagnostic(finding, texts, encoding))
    return published
