"""`--format json` (one document) and `--format json-lines` (one finding per line).

The JSON document is the documented machine format (README, "JSON output"):
{"version": 1, "tool": "rankcheck", "tool_version": ..., "findings": [Finding.to_dict(), ...]}.
"""

from __future__ import annotations

import json
from typing import Sequence

from rankcheck import __version__
from rankcheck.ftypes import Finding
from rankcheck.report import ReportContext

SCHEMA_VERSION = 1


def render(findings: Sequence[Finding], ctx: ReportContext) -> str:
    if ctx.format == "json-lines":
        return "".join(json.dumps(f.to_dict(), sort_keys=True) + "\n" for f in findings)
    document = {
        "version": SCHEMA_VERSION,
        "tool": "rankcheck",
        "tool_version": __version__,
        "files_checked": ctx.files_checked,
        "findings": [f.to_dict() for f in findings],
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"
