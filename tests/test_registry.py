"""One registry of codes, kept honest: each code has a checker, a doc page with the Ruff headings,
and buggy and safe corpus cases; no code is reused; names read as the pattern they flag."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from corpus_support import CORPUS, expected_marks

from rankcheck.catalog import CatalogError, load_catalog
from rankcheck.checks import RULES
from rankcheck.checks.classify import DIVERGENCE_CODES, rule_for
from rankcheck.ftypes import PER_RANK_DATA, RANK_IDENTITY, Location
from rankcheck.interp.tree import ExitKind, GuardRef
from rankcheck.program.ir import GuardKeyword
from rankcheck.rules_meta import all_rules, rules_dir
from rankcheck.sequences.compare import Cause, Divergence
from rankcheck.sequences.flatten import Catch, Event, EventKind

PACKAGE = Path(__file__).resolve().parent.parent / "rankcheck"

TOOL_CODES = {"RC001", "RC002", "RC003", "RC004", "RC005"}  # diagnostics produced by the pipeline, not a checker


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
        assert r.summary and r.messages


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


def test_exceptions_raised_together_belong_to_a_collective_that_fails_together(tmp_path: Path) -> None:
    entry = '[collective.load]\ncallables = ["pkg.load"]\nraises_together = ["pkg.LoadError"]\n'
    (tmp_path / "mine.toml").write_text(entry, encoding="utf-8")
    with pytest.raises(CatalogError) as raised:
        load_catalog(tmp_path)
    assert "mine.toml" in str(raised.value) and "`collective.load.raises_together`" in str(raised.value)
    (tmp_path / "mine.toml").write_text(entry + "fails_together = true\n", encoding="utf-8")
    assert load_catalog(tmp_path).raised_together == {"pkg.LoadError"}


def test_a_call_communicating_under_backends_names_backends_a_rules_file_defines(tmp_path: Path) -> None:
    entry = '[type."pkg.Saver"]\nmethods.save = { op = "barrier", only_under = ["zero"] }\n'
    (tmp_path / "mine.toml").write_text(entry, encoding="utf-8")
    with pytest.raises(CatalogError) as raised:
        load_catalog(tmp_path)
    assert "`pkg.Saver.save` names backends no rules file defines: ['zero']" in str(raised.value)
    (tmp_path / "backends.toml").write_text('[backend.zero]\nmembers = ["ZERO"]\nwords = ["Zero"]\n', encoding="utf-8")
    catalog = load_catalog(tmp_path)
    assert catalog.types["pkg.Saver"].methods["save"].only_under == ("zero",)
    assert catalog.backends["zero"].words == frozenset({"zero"}) and not catalog.backends["zero"].assumed
    malformed = tmp_path / "malformed"
    malformed.mkdir()
    (malformed / "backends.toml").write_text('[backend.zero]\nmembers = "ZERO"\n', encoding="utf-8")
    with pytest.raises(CatalogError, match=r"backends\.toml: `backend\.zero` takes lists of names"):
        load_catalog(malformed)


def test_every_message_template_is_used() -> None:
    """Each variant in rules/codes.toml is named (`render("variant", ...)`) by a module of its
    code; a variant a module names but codes.toml lacks fails the corpus tests (KeyError)."""
    named = set()
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        codes = set(re.findall(r'\bCODE = "(RC\d{3})"', text)) | set(re.findall(r'get_rule\("(RC\d{3})"\)', text))
        literals = set(re.findall(r'"(\w+)"', text))
        named.update((r.code, v) for r in all_rules() if r.code in codes for v in r.messages if v in literals)
    # RC001 and RC002 carry the problem's own words: their one template is "{detail}".
    declared = {(r.code, v) for r in all_rules() for v in r.messages if r.code not in ("RC001", "RC002")}
    assert declared <= named, sorted(declared - named)
    assert all(r.messages == {"detail": "{detail}"} for r in all_rules() if r.code in ("RC001", "RC002"))


def test_each_rules_messages_start_with_its_own_phrase_and_the_names_come_after() -> None:
    """sarif-tools and code-scanning views group results by the start of the message: every
    variant of a hang rule opens with one literal phrase of that rule and a colon, the rules'
    phrases all differ, and nothing that varies comes before it."""
    phrases = {}
    for rule in all_rules():
        if rule.family != "hang":
            continue
        starts = {template.split(": ", 1)[0] for template in rule.messages.values()}
        assert len(starts) == 1, (rule.code, starts)
        (phrase,) = starts
        assert "{" not in phrase and "`" not in phrase and len(phrase.split()) >= 3, (rule.code, phrase)
        phrases[rule.code] = phrase
    assert len(set(phrases.values())) == len(phrases), phrases


def _divergence(cause: Cause, exit_kind, guard_kind: str, keyword: GuardKeyword, other: bool, fatal: bool, caught: bool) -> Divergence:
    where = Location("m.py", 1, 1, 1, 5)
    guard = GuardRef(where, "if x:", "x", None, guard_kind, keyword=keyword)
    event = Event(EventKind.COLLECTIVE, ("c", "all_reduce", "WORLD"), None, ((guard, True),), op="all_reduce")
    exit_event = None
    if exit_kind is not None:
        exit_event = Event(EventKind.EXIT, ("X",), None, ((guard, True),), exit_kind=exit_kind, fatal=fatal,
                           caught=Catch("except OSError:", where) if caught else None)
    return Divergence(cause, event, guard, True, exit_event=exit_event, other_event=event if other else None)


@pytest.mark.parametrize("cause", list(Cause), ids=[c.value for c in Cause])
def test_every_kind_of_divergence_is_claimed_by_one_rule_or_dropped_for_a_reason(cause: Cause) -> None:
    """The divergence rules read `classify.claim` alone; over every combination of what a
    divergence can be, `rule_for` names one of them, or none in the cases the module documents."""
    for exit_kind in [None, *ExitKind]:
        for guard_kind in (RANK_IDENTITY, PER_RANK_DATA):
            for keyword in GuardKeyword:
                for other in (False, True):
                    for fatal in (False, True):
                        for caught_here in (False, True):
                            for caller_catch in (None, Catch("except Exception:", Location("n.py", 9, 5))):
                                div = _divergence(cause, exit_kind, guard_kind, keyword, other, fatal, caught_here)
                                code = rule_for(div, caller_catch)
                                if code is None:
                                    dropped_on_purpose = (cause is Cause.MISMATCH and not other) or (cause is Cause.EXIT and exit_kind is None)
                                    assert dropped_on_purpose, (cause, exit_kind, guard_kind, keyword, other, fatal)
                                    continue
                                assert code in DIVERGENCE_CODES and code in RULES
                                if cause is Cause.EXIT and fatal and exit_kind not in (ExitKind.CONTINUE, ExitKind.BREAK):
                                    survives = caught_here or caller_catch is not None
                                    assert code == ("RC102" if survives else "RC108"), (exit_kind, guard_kind, survives, code)


def test_the_divergence_rules_are_the_ones_that_read_the_classification() -> None:
    for code in DIVERGENCE_CODES:
        source = (PACKAGE / "checks" / f"{RULES[code].__name__.rsplit('.', 1)[-1]}.py").read_text(encoding="utf-8")
        assert "claim(analysis, qual, div) != CODE" in source, code
    for code, module in RULES.items():
        if code not in DIVERGENCE_CODES:
            source = (PACKAGE / "checks" / f"{module.__name__.rsplit('.', 1)[-1]}.py").read_text(encoding="utf-8")
            assert "divergences" not in source, code


def test_a_driven_loop_names_its_hook_and_where_the_loader_is_given(tmp_path: Path) -> None:
    entry = '[type."pkg.Trainer"]\nmethods.fit = {{ op = "barrier", drives = [{{ hook = "training_step", loader = {loader} }}] }}\n'
    (tmp_path / "mine.toml").write_text(entry.format(loader='"train_dataloaders"'), encoding="utf-8")
    with pytest.raises(CatalogError) as raised:
        load_catalog(tmp_path)
    assert "mine.toml" in str(raised.value) and "drives[0].loader: must be [position" in str(raised.value)
    (tmp_path / "mine.toml").write_text(entry.format(loader='[1, "train_dataloaders"]'), encoding="utf-8")
    (driven,) = load_catalog(tmp_path).types["pkg.Trainer"].methods["fit"].drives
    assert (driven.hook, driven.loader, driven.model, driven.provider) == ("training_step", (1, "train_dataloaders"), (0, "model"), "")


def test_a_framework_that_reads_its_own_code_names_a_package(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text('[framework]\nname = "pkg"\nown_package = "pkg.sub"\n', encoding="utf-8")
    with pytest.raises(CatalogError) as raised:
        load_catalog(tmp_path)
    assert "mine.toml" in str(raised.value) and "`framework.own_package` must be a package name" in str(raised.value)
    (tmp_path / "mine.toml").write_text('[framework]\nname = "pkg"\nown_package = "pkg"\n', encoding="utf-8")
    assert load_catalog(tmp_path).own_packages == {"pkg"}
