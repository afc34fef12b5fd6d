"""Suppression comments: `# noqa: RC101` (what ruff and flake8 users type) and
`# rankcheck: ignore[RC101]` (codes optional: none means every code), read from the tokens."""

from __future__ import annotations

import io
import re
import tokenize
from typing import List, Tuple

from rankcheck.program.ir import Suppression

_SUPPRESSION_RE = re.compile(
    r"#\s*(?:(?P<noqa>noqa)(?::\s*(?P<noqa_codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?"
    r"|rankcheck:\s*ignore(?:\[(?P<rc_codes>[^\]]*)\])?)",
    re.IGNORECASE,
)



def parse_suppressions(text: str) -> Tuple[Suppression, ...]:
    if "noqa" not in text.lower() and "rankcheck:" not in text:
        return ()
    found: List[Suppression] = []
    try:
        tokens = [
            (tok.start[0], tok.start[1], tok.string)
            for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        tokens = [(n, line.find("#"), line[line.find("#") :]) for n, line in enumerate(text.splitlines(), 1) if "#" in line]
    for line, col, comment in tokens:
        for match in _SUPPRESSION_RE.finditer(comment):
            if match.group("noqa"):
                raw = match.group("noqa_codes") or ""
                form = "noqa"
            else:
                raw = match.group("rc_codes") or ""
                form = "rankcheck"
            codes = tuple(c.upper() for c in re.split(r"[\s,]+", raw) if c)
            found.append(Suppression(line=line, codes=codes, form=form, column=col + match.start() + 1))
    return tuple(found)
