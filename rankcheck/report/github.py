"""`--format github`: GitHub Actions workflow commands, one annotation per finding.

`::error file=PATH,line=L,col=C,endLine=L2,endColumn=C2,title=RC101 (name)::message`
GitHub shows these on the pull request diff. The file path is the finding's path (relative to the
working directory, which in a workflow is the repository checkout). Escaping follows the Actions
toolkit: `%`, CR and LF everywhere, plus `:` and `,` inside properties.
"""

from __future__ import annotations

from typing import Sequence

from rankcheck.ftypes import ERROR, WARNING, Finding
from rankcheck.report import ReportContext
from rankcheck.report.text import evidence_lines


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(severity: str) -> str:
    if severity == ERROR:
        return "error"
    if severity == WARNING:
        return "warning"
    return "notice"


def annotation(finding: Finding) -> str:
    loc = finding.location
    properties = [("file", loc.path.replace("\\", "/")), ("line", str(loc.line)),
                  ("col", str(loc.column))]
    if loc.end_line:
        properties.append(("endLine", str(loc.end_line)))
        if loc.end_column:
            properties.append(("endColumn", str(loc.end_column)))
    name = finding.name
    properties.append(("title", f"{finding.code} ({name})" if name else finding.code))
    props = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    # The evidence (guard, call path) goes on the annotation's following lines.
    body = "\n".join([finding.message] + [line.strip() for line in evidence_lines(finding)])
    return f"::{_command(finding.severity)} {props}::{escape_data(body)}"


def render(findings: Sequence[Finding], ctx: ReportContext) -> str:
    return "".join(annotation(f) + "\n" for f in findings)
