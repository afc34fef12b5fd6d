"""`--format json` (one document) and `--format json-lines` (one finding per line).

The JSON document is the documented machine format (README, "JSON output"):
{"version": 1, "tool": "rankcheck", "tool_version": ..., "findings": [Finding.to_dict(), ...]}.
Its JSON Schema ships beside this module (`SCHEMA_PATH`); a json-lines line is its `finding`.
Lines and columns are 1-based and an end is never before its start: a location whose extent is
not known (a syntax error's) ends where it starts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from rankcheck import __version__
from rankcheck.ftypes import Finding
from rankcheck.report import ReportContext

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("rankcheck-json.schema.json")


def _with_ends(value: Any) -> Any:
    """Every location in `value` (a Finding.to_dict()) with a 1-based end: the analysis leaves the
    end 0 where it does not know it, which no 1-based consumer can read."""
    if isinstance(value, list):
        return [_with_ends(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {key: _with_ends(item) for key, item in value.items()}
    if {"line", "column", "end_line", "end_column"} <= out.keys():
        if out["end_line"] < out["line"]:
            out["end_line"], out["end_column"] = out["line"], out["column"]
        elif out["end_line"] == out["line"] and out["end_column"] < out["column"]:
            out["end_column"] = out["column"]
        elif out["end_column"] < 1:
            out["end_column"] = 1
    return out


def finding_dict(finding: Finding) -> dict:
    """One finding as the JSON formats print it."""
    return _with_ends(finding.to_dict())


def render(findings: Sequence[Finding], ctx: ReportContext) -> str:
    if ctx.format == "json-lines":
        return "".join(json.dumps(finding_dict(f), sort_keys=True) + "\n" for f in findings)
    document = {
        "version": SCHEMA_VERSION,
        "tool": "rankcheck",
        "tool_version": __version__,
        "files_checked": ctx.files_checked,
        "findings": [finding_dict(f) for f in findings],
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"
