"""Every corpus case, with its expected findings on their lines; plus a precision/recall table."""

from __future__ import annotations

from collections import Counter

import pytest

from corpus_support import Case, actual_marks, cases, describe, expected_marks

ALL_CASES = cases()


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.name for c in ALL_CASES])
def test_case_findings_match_markers(case: Case) -> None:
    expected = expected_marks(case.files(), case.base())
    actual, findings = actual_marks(case)
    missing = expected - actual
    extra = actual - expected
    details = "\n".join(f"  {f.location}: {f.code} {f.message}" for f in findings)
    assert not missing and not extra, (
        f"{case.name}\n  missing: {describe(missing)}\n  extra:   {describe(extra)}\n  findings:\n{details}"
    )


def test_corpus_precision_recall_table(capsys) -> None:
    """Prints the per-code table the issue asks for; fails on any miss or extra (as above, in sum)."""
    tp: Counter = Counter()
    fp: Counter = Counter()
    fn: Counter = Counter()
    for case in ALL_CASES:
        expected = expected_marks(case.files(), case.base())
        actual, _ = actual_marks(case)
        for mark in actual & expected:
            tp[mark[2]] += 1
        for mark in actual - expected:
            fp[mark[2]] += 1
        for mark in expected - actual:
            fn[mark[2]] += 1
    codes = sorted(set(tp) | set(fp) | set(fn))
    lines = [f"{'code':<7}{'tp':>5}{'fp':>5}{'fn':>5}{'precision':>11}{'recall':>8}"]
    for code in codes:
        p = tp[code] / (tp[code] + fp[code]) if tp[code] + fp[code] else 1.0
        r = tp[code] / (tp[code] + fn[code]) if tp[code] + fn[code] else 1.0
        lines.append(f"{code:<7}{tp[code]:>5}{fp[code]:>5}{fn[code]:>5}{p:>11.3f}{r:>8.3f}")
    with capsys.disabled():
        print(f"\ncorpus: {len(ALL_CASES)} cases\n" + "\n".join(lines))
    assert sum(tp.values()) > 0
    assert not fp and not fn
