"""The Example and Use instead blocks of every rule page run as corpus cases (Fixit's VALID/INVALID),
so a page cannot describe behaviour the tool lacks. A block of several files (what RC004 is about)
starts each with a `# file: path` line and runs as a directory case."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from corpus_support import expected_marks

from rankcheck.api import run_check
from rankcheck.rules_meta import all_rules, rules_dir

BLOCK = re.compile(r"^## (?P<section>[^\n]+)\n(?P<body>.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)
PYTHON = re.compile(r"```python\n(.*?)```", re.DOTALL)
FILE_LINE = re.compile(r"^# file: (\S+)\n", re.MULTILINE)


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
    pieces = FILE_LINE.split(source)
    if len(pieces) == 1:
        path = tmp_path / "example.py"
        path.write_text(source, encoding="utf-8")
        paths = [path]
        findings = run_check([path], root=tmp_path, context=False, extend_select=[code]).findings
    else:
        assert not pieces[0].strip(), "text before the first `# file:` line"
        paths = []
        for name, text in zip(pieces[1::2], pieces[2::2]):
            paths.append(tmp_path / name)
            paths[-1].parent.mkdir(parents=True, exist_ok=True)
            paths[-1].write_text(text, encoding="utf-8")
        findings = run_check([tmp_path], root=tmp_path, extend_select=[code]).findings
    expected = {(name, line, c) for name, line, c in expected_marks(paths, tmp_path)}
    actual = {(Path(f.location.path).resolve().relative_to(tmp_path.resolve()).as_posix(), f.location.line, f.code) for f in findings}
    if section == "Example":
        assert any(c == code for _, _, c in expected), f"the {code} Example marks no `# expect: {code}`"
    else:
        assert not expected, "a Use instead block must not expect findings"
    assert actual == expected, [f"{f.location}: {f.code} {f.message}" for f in findings]
