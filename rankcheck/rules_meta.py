"""Rule metadata: the one registry of codes (rules/codes.toml) and the doc pages beside it.

Every surface that names a rule (text output, `rankcheck rule`, SARIF `tool.driver.rules`, the
LSP `codeDescription`) reads it from here, so a code's name and summary live in one place.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from rankcheck import _toml

DOCS_BASE_URL = "https://github.com/rankcheck/rankcheck/blob/main/rules/"


def rules_dir() -> Path:
    """The directory of the TOML knowledge and doc pages.

    In a source checkout it is the top-level `rules/`; installed, it is the `rankcheck.rules`
    package that setuptools maps from that directory.
    """
    here = Path(__file__).resolve().parent
    checkout = here.parent / "rules"
    if (checkout / "codes.toml").is_file():
        return checkout
    return here / "rules"


@dataclass(frozen=True)
class RuleMeta:
    code: str
    name: str
    family: str
    severity: str
    summary: str
    messages: Mapping[str, str]  # variant -> message template (rules/codes.toml)
    default: bool

    def render(self, variant: str, **fields: object) -> str:
        """The message of `variant`, its fields filled in."""
        return self.messages[variant].format(**fields)

    @property
    def phrase(self) -> str:
        """The words every message of this rule opens with (rules/codes.toml: the rule's phrase, a
        colon, then the names), for messages written outside a checker (`rankcheck verify`)."""
        return next(iter(self.messages.values())).split(": ", 1)[0]

    @property
    def doc_path(self) -> Path:
        return rules_dir() / f"{self.code}.md"

    @property
    def help_uri(self) -> str:
        return f"{DOCS_BASE_URL}{self.code}.md"

    def doc(self) -> str:
        try:
            return self.doc_path.read_text(encoding="utf-8")
        except OSError:
            return f"# {self.code} {self.name}\n\n{self.summary}\n"


@functools.cache
def _registry() -> dict[str, RuleMeta]:
    raw = _toml.loads((rules_dir() / "codes.toml").read_text(encoding="utf-8"))
    return {
        code: RuleMeta(
            code=code,
            name=entry["name"],
            family=entry["family"],
            severity=entry["severity"],
            summary=entry["summary"],
            messages=MappingProxyType(dict(entry["messages"])),
            default=entry.get("default", True),
        )
        for code, entry in sorted(raw.items())
    }


def all_rules() -> list[RuleMeta]:
    return list(_registry().values())


def get_rule(code: str) -> RuleMeta:
    return _registry()[code]


def known_code(code: str) -> bool:
    return code in _registry()


def rule_name(code: str) -> str:
    meta = _registry().get(code)
    return meta.name if meta else ""
