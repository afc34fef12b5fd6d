"""`check --fix` and `check --diff`: fixes applied to the files, or shown as a diff.

`--fix` works in rounds, as ruff does: the fixes of every file applied (those that do not overlap
another), the project checked again, until no applicable fix is left (or MAX_ROUNDS); what is
then reported is what remains. `--diff` shows the first round without writing anything."""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from rankcheck.fix import attach_fixes, read_file
from rankcheck.fix.edits import apply_edits, unified_diff
from rankcheck.ftypes import SAFE, Edit, Finding

MAX_ROUNDS = 10


def applicable(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and (unsafe or finding.fix.applicability == SAFE)


def _edits_by_path(findings: Sequence[Finding], unsafe: bool) -> Dict[str, List[Edit]]:
    by_path: Dict[str, List[Edit]] = {}
    for finding in attach_fixes(findings):
        if applicable(finding, unsafe):
            assert finding.fix is not None
            by_path.setdefault(finding.location.path, []).extend(finding.fix.edits)
    return by_path


def _fixed_texts(findings: Sequence[Finding], unsafe: bool) -> Dict[str, Tuple[str, str, int]]:
    """path -> (text now, text fixed, fixes applied), for the files a fix changes."""
    out = {}
    for path, edits in _edits_by_path(findings, unsafe).items():
        text = read_file(path)
        if text is None:
            continue
        fixed, applied = apply_edits(text, edits)
        if fixed != text:
            out[path] = (text, fixed, len(applied))
    return out


def fix_in_place(findings: Sequence[Finding], recheck: Callable[[], Sequence[Finding]], unsafe: bool) -> Tuple[List[Finding], int]:
    """Apply fixes round by round; the findings left and how many fixes were applied."""
    current = list(findings)
    fixed = 0
    for _ in range(MAX_ROUNDS):
        changes = _fixed_texts(current, unsafe)
        if not changes:
            break
        for path, (_, text, count) in changes.items():
            try:
                with open(path, "w", encoding="utf-8", newline="") as handle:
                    handle.write(text)
            except OSError as exc:
                sys.stderr.write(f"rankcheck: cannot write the fix to {path}: {exc}\n")
                continue
            fixed += count
        current = list(recheck())
    return current, fixed


def diff_text(findings: Sequence[Finding], unsafe: bool) -> Tuple[str, int]:
    """The unified diff of what `--fix` would change first, and how many fixes it holds."""
    changes = _fixed_texts(findings, unsafe)
    text = "".join(unified_diff(path, old, new) for path, (old, new, _) in sorted(changes.items()))
    return text, sum(count for _, _, count in changes.values())


def fix_summary(remaining: Sequence[Finding], fixed: int) -> str:
    total = fixed + len(remaining)
    noun = "finding" if total == 1 else "findings"
    return f"rankcheck: found {total} {noun} ({fixed} fixed, {len(remaining)} remaining)\n"


def fixable_hint(findings: Sequence[Finding], unsafe: bool) -> str:
    """ruff's closing line: how many fixes `--fix` would apply, and how many need `--unsafe-fixes`."""
    ready = sum(1 for f in findings if applicable(f, unsafe))
    hidden = sum(1 for f in findings if f.fix is not None and not applicable(f, unsafe))
    parts = []
    if ready:
        parts.append(f"[*] {ready} fixable with the `--fix` option")
    if hidden:
        parts.append(f"{hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the `--unsafe-fixes` option")
    if not parts:
        return ""
    return "rankcheck: " + (parts[0] + (f" ({parts[1]})" if len(parts) > 1 else "")) + ".\n"


def fix_or_diff(findings: Sequence[Finding], recheck: Callable[[], Sequence[Finding]], args: Any, write: Callable[[str], None]) -> Tuple[List[Finding], Optional[int]]:
    """The check command's `--fix` / `--diff`: the findings to report, and the exit status when
    the command ends here (`--diff`: 1 when there is something to fix, as ruff)."""
    if args.diff:
        diff, count = diff_text(findings, args.unsafe_fixes)
        write(diff)
        sys.stderr.write(f"rankcheck: would apply {count} fix{'es' if count != 1 else ''}\n")
        return list(findings), (1 if count else 0)
    remaining, fixed = fix_in_place(findings, recheck, args.unsafe_fixes)
    sys.stderr.write(fix_summary(remaining, fixed))
    return remaining, None


def with_fixes(findings: Sequence[Finding], args: Any) -> List[Finding]:
    """The findings with their fixes, for every format to show; and ruff's hint on stderr."""
    out = attach_fixes(findings)
    if not args.fix:
        sys.stderr.write(fixable_hint(out, args.unsafe_fixes))
    return out
