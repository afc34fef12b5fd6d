"""The Example and Use instead blocks of every rule page run as corpus cases (Fixit's VALID/INVALID),
so a page cannot describe behaviour the tool lacks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from corpus_support import expected_marks

from rankcheck.api import run_check
from rankcheck.rules_meta import all_rules, rules_dir

BLOCK = re.compile(r"^## (?P<section>[^\n]+)\n(?P<body>.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)
PYTHON = re.compile(r"```python\n(.*?)```", re.DOTALL)


def python_blocks():
    for rule in all_rules():
        page = (rules_dir() / f"{rule.code}.md").read_text(encoding="utf-8")
        for section in BLOCK.finditer(page):
            name = section.group("section").strip()
            if name not in ("Example", "Use instead"):
                continue
            for n, code in enumerate(PYTHON.findall(section.group("body"))):
                yield pytest.param(rule.code, name, code, id=f"{rule.code}-{name.replace(' ', '_')}-{n}")


@pytest.mark.parametrize("code, section, source", list(python_blocks()))
def test_doc_example_behaves_as_documented(tmp_path: Path, code: str, section: str, source: str) -> None:
    path = tmp_path / "example.py"
    path.write_text(source, encoding="utf-8")
    expected = {(line, c) for _, line, c in expected_marks([path], tmp_path)}
    findings = run_check([path], root=tmp_path, context=False, extend_select=[code]).findings
    actual = {(f.location.line, f.code) for f in findings}
    if section == "Example":
        assert any(c == code for _, c in expected), f"the {code} Example marks no `# expect: {code}`"
    else:
        assert not expected, "a Use instead block must not expect findings"
    assert actual == expected, [f"{f.location}: {f.code} {f.message}" for f in findings]
