"""Scaffold a new rule: `python -m rankcheck.devtools.new_rule RC108 collective-in-teardown "summary"`.

Writes, in a source checkout:
  * rankcheck/checks/<name>.py      the rule module (CODE, check(analysis)), registered in RULES;
  * rules/codes.toml                the code's entry, with a first message template;
  * rules/<CODE>.md                 its page, with the headings the registry test asks for;
  * corpus/core/<code>_<name>.py    a buggy case with an `# expect: CODE` marker to move to the
                                    line the rule must report;
  * corpus/core/safe_<name>.py      its safe look-alike, which must stay silent.
The rule yields nothing until you write it: the buggy corpus case fails until it does, which is
the point (tests/test_corpus.py). Nothing is overwritten.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import List, Optional, Sequence

FAMILIES = {"RC0": "tool", "RC1": "hang", "RC2": "readiness"}


def _checkout(start: Path) -> Path:
    for directory in (start, *start.parents):
        if (directory / "rules" / "codes.toml").is_file() and (directory / "rankcheck" / "checks").is_dir():
            return directory
    raise SystemExit("new_rule: run it inside a rankcheck source checkout (no rules/codes.toml above here)")


def scaffold(root: Path, code: str, name: str, summary: str) -> List[Path]:
    """Create the rule's files under `root`; returns them. Refuses to overwrite anything."""
    if not re.fullmatch(r"RC\d{3}", code):
        raise ValueError(f"a code is RC and three digits, not {code!r}")
    if not re.fullmatch(r"[a-z]+(-[a-z]+)*", name):
        raise ValueError(f"a rule name is kebab-case words naming the pattern flagged, not {name!r}")
    codes_toml = root / "rules" / "codes.toml"
    registry = codes_toml.read_text(encoding="utf-8")
    if re.search(rf"^\[{code}\]", registry, re.M):
        raise ValueError(f"{code} is already in rules/codes.toml (codes are never reused)")
    if re.search(rf'^name = "{re.escape(name)}"', registry, re.M):
        raise ValueError(f"the name {name!r} is taken")
    module = name.replace("-", "_")
    family = FAMILIES.get(code[:3], "hang")
    files = {
        root / "rankcheck" / "checks" / f"{module}.py": _rule_module(code, name, summary),
        root / "rules" / f"{code}.md": _page(code, name, summary),
        root / "corpus" / "core" / f"{code.lower()}_{module}.py": _buggy_case(code, summary),
        root / "corpus" / "core" / f"safe_{module}.py": _safe_case(code),
    }
    for path in files:
        if path.exists():
            raise ValueError(f"{path} exists already")
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    codes_toml.write_text(
        registry.rstrip("\n")
        + f'\n\n[{code}]\nname = "{name}"\nfamily = "{family}"\nseverity = "error"\nsummary = "{summary}"\n'
        + f'messages.default = "{name.replace("-", " ")}: {{callee}} ... (the rule\'s phrase, a colon, then the names)"\n',
        encoding="utf-8",
    )
    _register(root / "rankcheck" / "checks" / "__init__.py", module)
    return [*files, codes_toml]


def _register(init: Path, module: str) -> None:
    text = init.read_text(encoding="utf-8")
    text = text.replace("from rankcheck.checks import (\n", f"from rankcheck.checks import (\n    {module},\n", 1)
    text = text.replace("    for module in (\n", f"    for module in (\n        {module},\n", 1)
    init.write_text(text, encoding="utf-8")


def _rule_module(code: str, name: str, summary: str) -> str:
    return f'''"""{code} {name}: {summary}."""

from __future__ import annotations

from typing import Iterator

from rankcheck.driver.analysis import Analysis
from rankcheck.ftypes import Finding
from rankcheck.rules_meta import get_rule

CODE = "{code}"


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    # Read what the analysis computed (analysis.results, analysis.divergences, ...) and yield
    # Finding(code=CODE, message=rule.render("default", ...), location=..., ...) for each hazard.
    del rule
    yield from ()
'''


def _page(code: str, name: str, summary: str) -> str:
    sections = ["What it does", "Why it hangs", "Example", "Use instead", "When it is safe", "Known false positives", "Options", "Verify"]
    body = "\n\n".join(f"## {title}\n\n(to write)" for title in sections)
    return f"# {code} {name}\n\n{summary}.\n\n{body}\n"


def _buggy_case(code: str, summary: str) -> str:
    return f'''"""{code}: {summary} (the hazard; move the marker to the line the rule reports)."""
import torch.distributed as dist


def step(t):
    if dist.get_rank() == 0:
        dist.all_reduce(t)  # expect: {code}
'''


def _safe_case(code: str) -> str:
    return f'''"""{code}'s look-alike that is safe: rankcheck must stay silent here."""
import torch.distributed as dist


def step(t):
    dist.all_reduce(t)
'''


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rankcheck.devtools.new_rule", description=__doc__.split("\n\n")[0])
    parser.add_argument("code", help="the new code, e.g. RC108 (never reuse one)")
    parser.add_argument("name", help="kebab-case name of the pattern flagged, e.g. collective-in-teardown")
    parser.add_argument("summary", help="one sentence: what it finds")
    args = parser.parse_args(argv)
    root = _checkout(Path.cwd())
    try:
        created = scaffold(root, args.code.upper(), args.name, args.summary.rstrip("."))
    except ValueError as exc:
        sys.stderr.write(f"new_rule: {exc}\n")
        return 2
    for path in created:
        print(path.relative_to(root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
