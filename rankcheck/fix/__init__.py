"""Fixes: libcst codemods that remove a finding, one module per kind, each with its applicability.

`attach_fixes(findings)` gives each finding the fix its file's text allows (`Finding.fix`), or
none: a kind proposes a rewrite only where it can show from the finding's evidence (which call,
which guard) and the statements around it that the ranks taking the guard run the same program
and the hang is gone. Anything else gets no fix; a fix never guesses.

Kinds: hoist (a reported value computed on every rank), framework (a framework call every rank
must make, moved out of a main-process guard), lightning (`sync_dist=True` under
`is_global_zero`), early_exit (RC102, unsafe: the collective above a rank's early return)."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Dict, List, Optional, Sequence

from rankcheck.fix import early_exit, framework, hoist, lightning
from rankcheck.fix.edits import edit_between
from rankcheck.fix.model import SourceModel
from rankcheck.ftypes import Finding, Fix

KINDS = (hoist, framework, lightning, early_exit)

# The precision gate: fixes only for the codes the real-code harness shows precise
# (bench/realcode; README, "Fixes"). A fix offered for a false alarm is worse than the alarm.
FIXABLE_CODES = frozenset({"RC101", "RC102"})

ReadText = Callable[[str], Optional[str]]

# A split guard is proven by analysing the fixed text again (fix.proposal.proven): at most this
# many such analyses (of the file by itself) per call: a file full of them cannot stall a run.
MAX_PROOFS = 16


def read_file(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def may_have_fix(finding: Finding) -> bool:
    """What every kind needs, read from the evidence alone, before the file is parsed: an `if`
    guard in the reported file, its condition a test or a chain of `and` (no `or`)."""
    guard = finding.guard
    if finding.code not in FIXABLE_CODES or guard is None or not finding.chain:
        return False
    if not guard.text.startswith("if ") or guard.location.path != finding.location.path:
        return False
    return "or" not in guard.condition.split()


def fixes_for_text(path: str, text: str, findings: Sequence[Finding], proofs: Optional[List[int]] = None) -> List[Optional[Fix]]:
    """The fix for each of `findings` (all in the file `path` whose text is `text`), or None."""
    out: List[Optional[Fix]] = [None] * len(findings)
    wanted = [i for i, f in enumerate(findings) if may_have_fix(f)]
    if not wanted:
        return out
    try:
        model = SourceModel(text, path, proofs if proofs is not None else [MAX_PROOFS])
    except Exception:  # libcst rejects it (or the text was edited since): no fix, the finding stays
        return out
    for index in wanted:
        finding = findings[index]
        for kind in KINDS:
            try:
                proposal = kind.propose(model, finding, findings)
            except Exception:  # a shape the kind did not foresee: no fix rather than a wrong one
                proposal = None
            if proposal is None:
                continue
            edit = edit_between(path, text, proposal.code)
            if edit is not None:
                out[index] = Fix(proposal.applicability, proposal.message, (edit,))
            break
    return out


def attach_fixes(findings: Sequence[Finding], read_text: ReadText = read_file) -> List[Finding]:
    """The findings, each with its fix when it has one. A file is read only when one of its
    findings may have a fix; every finding of it is seen (a fix must know its neighbours)."""
    by_path: Dict[str, List[int]] = {}
    for index, finding in enumerate(findings):
        by_path.setdefault(finding.location.path, []).append(index)
    result = list(findings)
    proofs = [MAX_PROOFS]
    for path, indices in by_path.items():
        if not any(may_have_fix(findings[i]) for i in indices):
            continue
        text = read_text(path)
        if text is None:
            continue
        for index, fix in zip(indices, fixes_for_text(path, text, [findings[i] for i in indices], proofs)):
            if fix is not None:
                result[index] = replace(findings[index], fix=fix)
    return result
