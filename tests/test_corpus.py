"""Every corpus case, with its expected findings on their lines; plus a precision/recall table."""

from __future__ import annotations

from collections import Counter

import pytest
from corpus_support import Case, actual_marks, cases, describe, expected_marks, known_gaps

ALL_CASES = cases()


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.name for c in ALL_CASES])
def test_case_findings_match_markers(case: Case) -> None:
    expected = expected_marks(case.files(), case.base())
    actual, findings = actual_marks(case)
    missing = expected - actual
    extra = actual - expected
    known_missing, known_extra = known_gaps(case)
    details = "\n".join(f"  {f.location}: {f.code} {f.message}" for f in findings)
    assert missing == known_missing and extra == known_extra, (
        f"{case.name}\n  missing: {describe(missing)} (known: {describe(known_missing)})"
        f"\n  extra:   {describe(extra)} (known: {describe(known_extra)})\n  findings:\n{details}"
    )


@pytest.mark.slow
def test_corpus_precision_recall_table(capsys) -> None:
    """Prints the per-code table, per group, with the known gaps counted; fails on any miss or
    extra beyond them (as above, in sum)."""
    tp: Counter = Counter()
    fp: Counter = Counter()
    fn: Counter = Counter()
    unexpected = []
    for case in ALL_CASES:
        group = case.name.split("/", 1)[0]
        expected = expected_marks(case.files(), case.base())
        actual, _ = actual_marks(case)
        known_missing, known_extra = known_gaps(case)
        for mark in actual & expected:
            tp[group, mark[2]] += 1
        for mark in actual - expected:
            fp[group, mark[2]] += 1
        for mark in expected - actual:
            fn[group, mark[2]] += 1
        unexpected += [(case.name, m) for m in ((actual - expected) ^ known_extra) | ((expected - actual) ^ known_missing)]
    lines = [f"{'group':<12}{'code':<7}{'tp':>5}{'fp':>5}{'fn':>5}{'precision':>11}{'recall':>8}"]
    for group, code in sorted(set(tp) | set(fp) | set(fn)):
        t, f, n = tp[group, code], fp[group, code], fn[group, code]
        p = t / (t + f) if t + f else 1.0
        r = t / (t + n) if t + n else 1.0
        lines.append(f"{group:<12}{code:<7}{t:>5}{f:>5}{n:>5}{p:>11.3f}{r:>8.3f}")
    with capsys.disabled():
        print(f"\ncorpus: {len(ALL_CASES)} cases\n" + "\n".join(lines))
    assert sum(tp.values()) > 0
    assert not unexpected, unexpected
