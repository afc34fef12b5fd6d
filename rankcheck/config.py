"""`[tool.rankcheck]` in pyproject.toml: read, validated, and turned into a Config.

Every problem names the file and the key, and says what was expected (ruff's habit)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from rankcheck import _toml
from rankcheck.rules_meta import all_rules, known_code


class ConfigError(ValueError):
    def __init__(self, message: str, path: Optional[Path] = None, key: Optional[str] = None, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.path = path
        self.key = key
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Config:
    select: Optional[Tuple[str, ...]] = None  # None: every rule enabled by default
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    exclude: Tuple[str, ...] = ()
    extend_exclude: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    extra_collectives: Mapping[str, str] = field(default_factory=dict)  # qualname -> op
    extra_rank_sources: Mapping[str, str] = field(default_factory=dict)  # qualname -> rank kind
    rank_zero_only_decorators: Tuple[str, ...] = ()  # the project's own `@rank_zero_only`
    warn_unused_ignores: bool = False
    # Test code (tests/ folders, test_*.py, test functions) is read for context; its findings are
    # reported only when asked: a test's assert can hang only when the test already fails.
    report_tests: bool = False
    source: Optional[Path] = None

    def enabled_codes(self) -> frozenset:
        codes = [r.code for r in all_rules()]
        if self.select is None:
            enabled = {r.code for r in all_rules() if r.default}
        else:
            enabled = {c for c in codes if any(_matches(c, s) for s in self.select)}
        enabled |= {c for c in codes if any(_matches(c, s) for s in self.extend_select)}
        enabled -= {c for c in codes if any(_matches(c, s) for s in self.ignore)}
        if self.warn_unused_ignores:
            enabled.add("RC003")
        # A file that cannot be read and a broken configuration are always reported.
        enabled |= {"RC001", "RC002"}
        return frozenset(enabled)


def _matches(code: str, selector: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


KNOWN_KEYS = {
    "select": "a list of rule codes or prefixes, e.g. [\"RC1\"]",
    "extend-select": "a list of rule codes or prefixes",
    "ignore": "a list of rule codes or prefixes",
    "exclude": "a list of glob patterns",
    "extend-exclude": "a list of glob patterns",
    "per-file-ignores": "a table of glob pattern -> list of rule codes",
    "extra-collectives": "a table of dotted function name -> collective op, or a list of dotted names",
    "extra-rank-sources": "a table of dotted function name -> rank kind, or a list of dotted names",
    "rank-zero-only-decorators": "a list of decorator names that make a function run on rank 0 only",
    "warn-unused-ignores": "true or false",
    "report-tests": "true or false",
}


_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
_DOTTED_KEY = rf"{_KEY_PART}(?:[ \t]*\.[ \t]*{_KEY_PART})*"
_HEADER_LINE = re.compile(rf"[ \t]*\[[ \t]*({_DOTTED_KEY})[ \t]*\]")
_KEY_LINE = re.compile(rf"[ \t]*({_DOTTED_KEY})[ \t]*=")


def _key_parts(dotted: str) -> list[str]:
    parts = []
    for match in re.finditer(_KEY_PART, dotted):
        part = match.group(0)
        if part.startswith('"'):
            try:
                part = json.loads(part)
            except ValueError:
                part = part[1:-1]
        elif part.startswith("'"):
            part = part[1:-1]
        parts.append(part)
    return parts


def _key_position(text: str, key: str) -> Tuple[int, int]:
    """Where `tool.rankcheck.<key>` is written (1-based line, column), however the TOML spells it:
    under `[tool.rankcheck]`, as `rankcheck.select` under `[tool]`, as a `[tool.rankcheck.<key>]`
    table, or as an entry of an inline table (`per-file-ignores = { "*.py" = ... }`: `key` is
    then `per-file-ignores.<pattern>`, the pattern taken whole, dots and all). Falls back to the
    nearest enclosing key that is written, then to 1:1."""
    head, _, entry = key.partition(".") if key.startswith("per-file-ignores.") else (key, "", "")
    target = ["tool", "rankcheck", head] + ([entry] if entry else [])
    best: tuple[int, tuple[int, int]] = (0, (1, 1))  # (parts matched, position)
    table: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER_LINE.match(line)
        if header:
            table = _key_parts(header.group(1))
            written, column = table, header.start(1) + 1
        else:
            assignment = _KEY_LINE.match(line)
            if not assignment:
                continue
            written, column = table + _key_parts(assignment.group(1)), assignment.start(1) + 1
        matched = 0
        while matched < min(len(written), len(target)) and written[matched] == target[matched]:
            matched += 1
        if matched < len(written):
            continue  # another key, or one below a different table
        if matched == len(target):
            return number, column
        if not header and entry and matched == len(target) - 1:
            # The entry inside an inline table on this line.
            inline = re.search(rf"""[{{,][ \t]*(?:"{re.escape(entry)}"|'{re.escape(entry)}'|{re.escape(entry)})[ \t]*=""", line)
            if inline:
                return number, inline.start() + 1 + len(inline.group(0)) - len(inline.group(0).lstrip("{, \t"))
        if matched > best[0]:
            best = (matched, (number, column))
    return best[1] if best[0] > 2 else (1, 1)


def _codes(value: Any, key: str, path: Path, text: str, prefixes: bool = True) -> Tuple[str, ...]:
    line, col = _key_position(text, key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: `tool.rankcheck.{key}` must be {KNOWN_KEYS.get(key, 'a list of rule codes')}, got {value!r}", path, key, line, col)
    for code in value:
        if code == "ALL" or known_code(code) or (prefixes and any(r.code.startswith(code) for r in all_rules()) and re.fullmatch(r"RC\d*", code)):
            continue
        raise ConfigError(f"{path}: `tool.rankcheck.{key}` names unknown rule code {code!r} (see `rankcheck rule --all`)", path, key, line, col)
    return tuple(value)


def _patterns(value: Any, key: str, path: Path, text: str) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        line, col = _key_position(text, key)
        raise ConfigError(f"{path}: `tool.rankcheck.{key}` must be {KNOWN_KEYS[key]}, got {value!r}", path, key, line, col)
    if key in ("exclude", "extend-exclude"):
        from rankcheck.driver.discover import invalid_glob

        for pattern in value:
            problem = invalid_glob(pattern)
            if problem is not None:
                line, col = _key_position(text, key)
                raise ConfigError(f"{path}: `tool.rankcheck.{key}` has an invalid glob pattern {pattern!r}: {problem}", path, key, line, col)
    return tuple(value)


def _name_table(value: Any, key: str, path: Path, text: str, default_from_name: bool) -> Dict[str, str]:
    line, col = _key_position(text, key)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        # A bare list: the op is the function's own last name (`mylib.comm.all_reduce` -> all_reduce);
        # a rank source is the global rank.
        return {v: (v.rsplit(".", 1)[-1] if default_from_name else "global_rank") for v in value}
    if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return dict(value)
    raise ConfigError(f"{path}: `tool.rankcheck.{key}` must be {KNOWN_KEYS[key]}, got {value!r}", path, key, line, col)


def parse_config(data: Mapping[str, Any], path: Path, text: str = "") -> Config:
    table = data.get("tool", {}).get("rankcheck", {}) if isinstance(data.get("tool", {}), dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: `tool.rankcheck` must be a table", path, "tool.rankcheck")
    for key in table:
        if key not in KNOWN_KEYS:
            line, col = _key_position(text, key)
            hint = ", ".join(sorted(KNOWN_KEYS))
            raise ConfigError(f"{path}: unknown key `tool.rankcheck.{key}`; known keys: {hint}", path, key, line, col)
    kwargs: Dict[str, Any] = {"source": path}
    if "select" in table:
        kwargs["select"] = _codes(table["select"], "select", path, text)
    if "extend-select" in table:
        kwargs["extend_select"] = _codes(table["extend-select"], "extend-select", path, text)
    if "ignore" in table:
        kwargs["ignore"] = _codes(table["ignore"], "ignore", path, text)
    if "exclude" in table:
        kwargs["exclude"] = _patterns(table["exclude"], "exclude", path, text)
    if "extend-exclude" in table:
        kwargs["extend_exclude"] = _patterns(table["extend-exclude"], "extend-exclude", path, text)
    if "per-file-ignores" in table:
        value = table["per-file-ignores"]
        if not isinstance(value, dict):
            line, col = _key_position(text, "per-file-ignores")
            raise ConfigError(f"{path}: `tool.rankcheck.per-file-ignores` must be {KNOWN_KEYS['per-file-ignores']}, got {value!r}", path, "per-file-ignores", line, col)
        kwargs["per_file_ignores"] = tuple(
            (pattern, _codes(codes, f"per-file-ignores.{pattern}", path, text)) for pattern, codes in value.items()
        )
    if "extra-collectives" in table:
        kwargs["extra_collectives"] = _name_table(table["extra-collectives"], "extra-collectives", path, text, True)
    if "extra-rank-sources" in table:
        kwargs["extra_rank_sources"] = _name_table(table["extra-rank-sources"], "extra-rank-sources", path, text, False)
    if "rank-zero-only-decorators" in table:
        kwargs["rank_zero_only_decorators"] = _patterns(table["rank-zero-only-decorators"], "rank-zero-only-decorators", path, text)
    if "warn-unused-ignores" in table:
        value = table["warn-unused-ignores"]
        if not isinstance(value, bool):
            line, col = _key_position(text, "warn-unused-ignores")
            raise ConfigError(f"{path}: `tool.rankcheck.warn-unused-ignores` must be true or false, got {value!r}", path, "warn-unused-ignores", line, col)
        kwargs["warn_unused_ignores"] = value
    if "report-tests" in table:
        value = table["report-tests"]
        if not isinstance(value, bool):
            line, col = _key_position(text, "report-tests")
            raise ConfigError(f"{path}: `tool.rankcheck.report-tests` must be true or false, got {value!r}", path, "report-tests", line, col)
        kwargs["report_tests"] = value
    return Config(**kwargs)


def load_config(pyproject: Path) -> Config:
    """Read `[tool.rankcheck]`; a missing file or table is the default Config."""
    try:
        present, regular = pyproject.exists(), pyproject.is_file()
    except OSError as exc:  # PermissionError: a directory on the way cannot be searched
        raise ConfigError(f"{pyproject}: cannot read: {exc.strerror or exc}", pyproject) from exc
    if not present:
        if pyproject.is_symlink():
            raise ConfigError(f"{pyproject}: cannot read: a symbolic link that leads nowhere (or a loop)", pyproject)
        return Config()
    if not regular:
        # A directory or a FIFO: reading it would fail or block forever.
        raise ConfigError(f"{pyproject}: not a regular file; cannot read the configuration", pyproject)
    try:
        text = pyproject.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{pyproject}: cannot read: {exc}", pyproject) from exc
    try:
        data = _toml.loads(text)
    except _toml.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        col = getattr(exc, "colno", None)
        where = re.search(r"line (\d+), column (\d+)", str(exc))
        if line is None and where:
            line, col = int(where.group(1)), int(where.group(2))
        elif line is None and "end of document" in str(exc):
            line, col = text.count("\n") + 1, 1
        raise ConfigError(f"{pyproject}: invalid TOML: {exc}", pyproject, None, line or 1, col or 1) from exc
    except RecursionError as exc:
        raise ConfigError(f"{pyproject}: invalid TOML: nested too deeply to read", pyproject) from exc
    return parse_config(data, pyproject, text)


def merge_cli(config: Config, *, select: Optional[Sequence[str]] = None, extend_select: Sequence[str] = (), ignore: Sequence[str] = (), warn_unused_ignores: Optional[bool] = None, extend_exclude: Sequence[str] = (), report_tests: Optional[bool] = None) -> Config:
    """The command line beats the file (ruff's precedence)."""
    from dataclasses import replace

    changes: Dict[str, Any] = {}
    if select is not None:
        changes["select"] = tuple(select)
    if extend_select:
        changes["extend_select"] = config.extend_select + tuple(extend_select)
    if ignore:
        changes["ignore"] = config.ignore + tuple(ignore)
    if warn_unused_ignores is not None:
        changes["warn_unused_ignores"] = warn_unused_ignores
    if extend_exclude:
        changes["extend_exclude"] = config.extend_exclude + tuple(extend_exclude)
    if report_tests is not None:
        changes["report_tests"] = report_tests
    return replace(config, **changes) if changes else config


def validate_cli_codes(codes: Sequence[str], option: str) -> List[str]:
    bad = [c for c in codes if not (c == "ALL" or known_code(c) or (re.fullmatch(r"RC\d*", c) and any(r.code.startswith(c) for r in all_rules())))]
    return [f"{option}: unknown rule code {c!r} (see `rankcheck rule --all`)" for c in bad]
