"""One registry of codes, kept honest: each code has a checker, a doc page with the Ruff headings,
and buggy and safe corpus cases; no code is reused; names read as the pattern they flag."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from corpus_support import CORPUS, expected_marks

from rankcheck.catalog import CatalogError, load_catalog
from rankcheck.checks import RULES
from rankcheck.rules_meta import all_rules, rules_dir

TOOL_CODES = {"RC001", "RC002", "RC003"}  # diagnostics produced by the pipeline, not a checker


def test_every_hazard_code_has_a_checker_and_every_checker_a_code() -> None:
    codes = {r.code for r in all_rules()}
    assert set(RULES) == codes - TOOL_CODES
    for code, module in RULES.items():
        assert module.CODE == code
        # the module is named after the rule (STYLE.md: "the module and checker carry the same name")
        name = next(r.name for r in all_rules() if r.code == code)
        assert module.__name__.rsplit(".", 1)[-1] == name.replace("-", "_")


def test_codes_and_names_are_unique_and_well_formed() -> None:
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules)
    assert len({r.name for r in rules}) == len(rules)
    for r in rules:
        assert re.fullmatch(r"RC\d{3}", r.code)
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", r.name)
        assert r.severity in ("error", "warning")
        assert r.summary and r.message


def test_every_code_has_a_doc_page_with_the_headings() -> None:
    for r in all_rules():
        page = (rules_dir() / f"{r.code}.md").read_text(encoding="utf-8")
        assert page.startswith(f"# {r.code} {r.name}\n"), r.code
        for heading in ("## What it does", "## Example", "## Use instead"):
            assert heading in page, (r.code, heading)
        if r.family == "hang":
            for heading in ("## Why it hangs", "## When it is safe", "## Known false positives", "## Verify"):
                assert heading in page, (r.code, heading)


def test_every_hazard_code_has_buggy_and_safe_corpus_cases() -> None:
    marked = set()
    safe_cases = 0
    groups = [g for g in CORPUS.iterdir() if g.is_dir() and not g.name.startswith("_")]
    for group in groups:
        for path in group.rglob("*.py"):
            marks = expected_marks([path], path.parent)
            marked.update(code for _, _, code in marks)
    for group in groups:
        safe_cases += sum(1 for p in group.iterdir() if p.name.startswith("safe_"))
    for code in RULES:
        assert code in marked, f"no corpus case expects {code}"
    assert safe_cases >= 20


def test_a_malformed_catalog_entry_names_its_file_and_key(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text('[uniform_in_group]\n"pkg.get_group" = "pp_rank"\n', encoding="utf-8")
    with pytest.raises(CatalogError) as raised:
        load_catalog(tmp_path)
    message = str(raised.value)
    assert "mine.toml" in message and "`uniform_in_group.pkg.get_group` must be a list of strings" in message
    (tmp_path / "mine.toml").write_text('[uniform_in_group]\n"pkg.get_group" = ["pp_rank"]\n', encoding="utf-8")
    assert load_catalog(tmp_path).uniform_in_group == {"pkg.get_group": frozenset({"pp_rank"})}
