"""Formatters only format: each takes the same findings and returns text.

A formatter module exposes `render(findings, ctx) -> str`. The CLI looks formats up here by name,
so adding one is a module plus a line in FORMATS.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable, Sequence

from rankcheck.ftypes import Finding

# format name -> module under rankcheck.report
FORMATS: dict[str, str] = {
    "concise": "text",
    "full": "text",
    "text": "text",
    "json": "json_format",
    "json-lines": "json_format",
    "sarif": "sarif",
    "github": "github",
    "lsp": "lsp_format",
    "html": "html",
    "markdown": "markdown",
}


@dataclass(frozen=True)
class ReportContext:
    format: str = "full"
    root: str = "."  # project root, for relative URIs (SARIF)
    color: bool = False
    show_statistics: bool = False
    files_checked: int = 0
    unsafe_fixes: bool = False  # unsafe fixes count as applicable (`[*]` in text), as with --unsafe-fixes


def get_renderer(fmt: str) -> Callable[[Sequence[Finding], ReportContext], str]:
    module = importlib.import_module(f"rankcheck.report.{FORMATS[fmt]}")
    return module.render
