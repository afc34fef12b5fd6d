"""`--format sarif`: SARIF 2.1.0 as GitHub code scanning reads it.

- `tool.driver.rules` lists every code from the registry (not only those found), with the
  descriptions and help GitHub requires and the doc page as `help.markdown`.
- Artifact URIs are relative to `%SRCROOT%`: the git checkout holding the project root (else the
  project root itself), the way GitHub maps them onto the repository.
- The guard and the rank source are `relatedLocations`; the call chain down to the collective is a
  `codeFlows` thread flow, one location per step.
- `partialFingerprints.primaryLocationLineHash` hashes the rule, the reported line's text (without
  whitespace changes or its trailing comment) and the occurrence index of that pair in the file,
  never the line number, so a finding keeps its identity when lines above it move.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tokenize
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence
from urllib.parse import quote

from rankcheck import __version__
from rankcheck.ftypes import ERROR, RANK_IDENTITY, WARNING, Finding, Fix, Location
from rankcheck.report import ReportContext
from rankcheck.rules_meta import DOCS_BASE_URL, RuleMeta, all_rules

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "rankcheck/v1"
INFORMATION_URI = DOCS_BASE_URL.split("/blob/")[0]

# A literal `[text](n)` in a message would read as an embedded link (SARIF 3.11.6).
_EMBEDDED_LINK = re.compile(r"\[([^\[\]]*)\]\((\d+)\)")


def render(findings: Sequence[Finding], ctx: ReportContext) -> str:
    return json.dumps(sarif_log(findings, ctx), indent=2) + "\n"


def sarif_log(findings: Sequence[Finding], ctx: ReportContext) -> dict:
    rules = all_rules()
    rule_index = {rule.code: index for index, rule in enumerate(rules)}
    root = source_root(ctx.root)
    lines = _LineReader()
    occurrences: dict[tuple[str, str, str], int] = {}
    results = []
    for finding in findings:
        text = lines.get(finding.location.path, finding.location.line)
        normalized = normalize_line(text) if text is not None else _fallback_identity(finding)
        key = (os.path.abspath(finding.location.path), finding.code, normalized)
        occurrences[key] = occurrences.get(key, 0) + 1
        results.append(_result(finding, rule_index, root, normalized, occurrences[key]))
    run = {
        "tool": {
            "driver": {
                "name": "rankcheck",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_rule_descriptor(rule) for rule in rules],
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": Path(root).as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def source_root(project_root: str) -> str:
    """What `%SRCROOT%` stands for: the git checkout holding the project, else the project root.

    GitHub resolves relative artifact URIs against the repository root, so a project whose
    pyproject.toml sits in a subdirectory of a monorepo must still report `subdir/train.py`.
    """
    root = os.path.abspath(project_root)
    probe = root
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return root
        probe = parent


def _level(severity: str) -> str:
    if severity == ERROR:
        return "error"
    if severity == WARNING:
        return "warning"
    return "note"


def _doc_section(doc: str, heading: str) -> str:
    """The paragraphs under `## <heading>` in a rule page, or ""."""
    match = re.search(rf"^##\s+{re.escape(heading)}\s*$(.*?)(?=^#|\Z)", doc, re.M | re.S | re.I)
    return match.group(1).strip() if match else ""


def _rule_descriptor(rule: RuleMeta) -> dict:
    doc = rule.doc()
    full = _doc_section(doc, "What it does") or rule.summary
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": full},
        "help": {"text": f"{rule.summary}. See {rule.help_uri}", "markdown": doc},
        "helpUri": rule.help_uri,
        "defaultConfiguration": {"level": _level(rule.severity), "enabled": bool(rule.default)},
        "properties": {"tags": [rule.family]},
    }


def _artifact_location(path: str, root: str) -> dict:
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, root)
    except ValueError:  # another drive on Windows
        relative = os.pardir
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return {"uri": Path(absolute).as_uri()}
    # Quoting the file system's bytes, not the str: a name that is not valid UTF-8 (legal on
    # Linux) holds lone surrogates that no text encoding accepts; its bytes percent-encode
    # (RFC 3986), as Path.as_uri() does for the absolute form.
    return {"uri": quote(os.fsencode(Path(relative).as_posix())), "uriBaseId": SRCROOT}


def _region(loc: Location) -> dict:
    region = {"startLine": max(loc.line, 1), "startColumn": max(loc.column, 1)}
    if loc.end_line:
        region["endLine"] = max(loc.end_line, region["startLine"])
        if loc.end_column:
            region["endColumn"] = max(loc.end_column, 1)
    return region


def _physical(loc: Location, root: str) -> dict:
    return {"artifactLocation": _artifact_location(loc.path, root), "region": _region(loc)}


def _message(text: str) -> dict:
    return {"text": _EMBEDDED_LINK.sub(r"\\[\1\\](\2)", text)}


def _result(finding: Finding, rule_index: dict, root: str, normalized: str, occurrence: int) -> dict:
    result: dict = {"ruleId": finding.code}
    if finding.code in rule_index:
        result["ruleIndex"] = rule_index[finding.code]
    result["level"] = _level(finding.severity)
    result["message"] = _message(finding.message)
    result["locations"] = [{"physicalLocation": _physical(finding.location, root)}]

    related: List[Dict[str, Any]] = []
    guard = finding.guard
    if guard is not None:
        related.append(
            {
                "id": len(related) + 1,
                "physicalLocation": _physical(guard.location, root),
                "message": _message(f"rank-dependent guard: `{guard.text}`"),
            }
        )
        if guard.source is not None:
            what = "rank" if guard.kind == RANK_IDENTITY else "per-rank data"
            related.append(
                {
                    "id": len(related) + 1,
                    "physicalLocation": _physical(guard.source.location, root),
                    "message": _message(f"the {what} comes from {guard.source.phrase}"),
                }
            )
            for way in guard.source.steps:
                related.append({"id": len(related) + 1, "physicalLocation": _physical(way.location, root), "message": _message(f"then {way.text}")})
    if related:
        result["relatedLocations"] = related

    if finding.chain:
        steps = []
        for order, step in enumerate(finding.chain, start=1):
            text = f"calls {step.callee}" + (f" ({step.note})" if step.note else "")
            steps.append(
                {
                    "location": {
                        "physicalLocation": _physical(step.location, root),
                        "message": _message(text),
                    },
                    "nestingLevel": order - 1,
                    "executionOrder": order,
                }
            )
        result["codeFlows"] = [
            {
                "message": _message(f"call path down to {finding.collective or 'the collective'}"),
                "threadFlows": [{"locations": steps}],
            }
        ]

    if finding.fix is not None:
        result["fixes"] = [_fix(finding.fix, root)]

    line_hash = _digest(f"{finding.code}\0{normalized}")[:16]
    result["partialFingerprints"] = {"primaryLocationLineHash": f"{line_hash}:{occurrence}"}
    artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    identity = "\0".join([artifact, finding.code, normalized, str(occurrence), finding.collective])
    result["fingerprints"] = {FINGERPRINT_KEY: _digest(identity)}

    properties = {"name": finding.name}
    if finding.collective:
        properties["collective"] = finding.collective
    if finding.verdict:
        properties["verdict"] = finding.verdict
        if finding.verdict_detail:
            properties["verdictDetail"] = finding.verdict_detail
    result["properties"] = properties
    return result


def _fix(fix: Fix, root: str) -> dict:
    """A SARIF fix (3.55): each edit a replacement of its region; the applicability a property."""
    changes: Dict[str, List[dict]] = {}
    for edit in fix.edits:
        region = {"startLine": edit.location.line, "startColumn": edit.location.column, "endLine": edit.end.line, "endColumn": edit.end.column}
        changes.setdefault(edit.location.path, []).append({"deletedRegion": region, "insertedContent": {"text": edit.content}})
    return {
        "description": _message(fix.message),
        "artifactChanges": [{"artifactLocation": _artifact_location(path, root), "replacements": edits} for path, edits in changes.items()],
        "properties": {"applicability": fix.applicability},
    }


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def normalize_line(text: str) -> str:
    """The line's code without its trailing comment and with whitespace runs collapsed."""
    code = text.strip()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code + "\n").readline):
            if tok.type == tokenize.COMMENT:
                code = code[: tok.start[1]]
                break
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # a line inside an open bracket or string: tokens so far are enough
    return " ".join(code.split())


def _fallback_identity(finding: Finding) -> str:
    """When the file cannot be read: the finding's own line-independent facts."""
    parts = [finding.collective, finding.chain[0].callee if finding.chain else ""]
    if finding.guard is not None:
        parts.append(finding.guard.condition)
    return "\0".join(parts)


class _LineReader:
    """Reads each reported file once per render."""

    def __init__(self) -> None:
        self._files: dict[str, Optional[list[str]]] = {}

    def get(self, path: str, line: int) -> Optional[str]:
        key = os.path.abspath(path)
        if key not in self._files:
            try:
                with open(key, encoding="utf-8", errors="replace", newline="") as handle:
                    text = handle.read()
                self._files[key] = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            except OSError:
                self._files[key] = None
        lines = self._files[key]
        if lines is None or not 1 <= line <= len(lines):
            return None
        return lines[line - 1]
