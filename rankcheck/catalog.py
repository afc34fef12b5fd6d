"""The knowledge, loaded from rules/*.toml: collectives, rank sources, rank predicates, exits.

Adding a framework is a TOML file (see rules/torch_distributed.toml for the format); nothing in the
analysis names a framework API in Python.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, Mapping, Optional, Tuple

from rankcheck import _toml
from rankcheck.rules_meta import rules_dir

# A rank predicate: (rank kind, comparison operator, constant), e.g. ("global_rank", "==", 0).
Predicate = Tuple[str, str, object]

_NON_CATALOG_FILES = {"codes.toml"}


class CatalogError(ValueError):
    """A rules/*.toml file (or a config extra) is malformed: the message names file and key."""


@dataclass(frozen=True)
class CollectiveSpec:
    qualname: str
    op: str
    group_position: Optional[int] = None
    group_keyword: Optional[str] = "group"
    uniformizes: Tuple[int, ...] = ()
    returns_uniform: bool = False
    note: str = ""
    framework: str = ""


@dataclass(frozen=True)
class Catalog:
    collectives: Mapping[str, CollectiveSpec] = field(default_factory=dict)
    rank_calls: Mapping[str, str] = field(default_factory=dict)
    rank_environ: Mapping[str, str] = field(default_factory=dict)
    rank_attributes: Mapping[str, str] = field(default_factory=dict)
    predicate_attributes: Mapping[str, Predicate] = field(default_factory=dict)
    predicate_calls: Mapping[str, Predicate] = field(default_factory=dict)
    exit_calls: FrozenSet[str] = frozenset()
    fingerprint: str = ""

    def collective(self, qualname: str) -> Optional[CollectiveSpec]:
        return self.collectives.get(qualname)

    def with_extras(self, extra_collectives: Mapping[str, str], extra_rank_sources: Mapping[str, str]) -> "Catalog":
        """A user's own wrappers from `[tool.rankcheck]`: qualname -> op / rank kind."""
        if not extra_collectives and not extra_rank_sources:
            return self
        collectives = dict(self.collectives)
        for qual, op in extra_collectives.items():
            collectives[qual] = CollectiveSpec(qualname=qual, op=op, framework="configuration")
        rank_calls = dict(self.rank_calls)
        rank_calls.update(extra_rank_sources)
        digest = hashlib.sha256(
            (self.fingerprint + repr(sorted(extra_collectives.items())) + repr(sorted(extra_rank_sources.items()))).encode()
        ).hexdigest()
        return Catalog(
            collectives=collectives,
            rank_calls=rank_calls,
            rank_environ=self.rank_environ,
            rank_attributes=self.rank_attributes,
            predicate_attributes=self.predicate_attributes,
            predicate_calls=self.predicate_calls,
            exit_calls=self.exit_calls,
            fingerprint=digest,
        )


_PREDICATE_OPS = ("==", "!=", "<=", ">=", "<", ">")


def parse_predicate(text: str, where: str) -> Predicate:
    """'global_rank == 0' -> ('global_rank', '==', 0)."""
    for op in _PREDICATE_OPS:
        if f" {op} " in text:
            kind, _, const = text.partition(f" {op} ")
            try:
                return (kind.strip(), op, int(const.strip()))
            except ValueError:
                break
    raise CatalogError(f"{where}: expected a predicate like 'global_rank == 0', got {text!r}")


def _table(data: Mapping, key: str, where: str) -> Mapping:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise CatalogError(f"{where}: `{key}` must be a table")
    return value


def _str_map(data: Mapping, key: str, where: str) -> Dict[str, str]:
    table = _table(data, key, where)
    for k, v in table.items():
        if not isinstance(v, str):
            raise CatalogError(f"{where}: `{key}.{k}` must be a string")
    return dict(table)


def _load_file(path: Path, acc: Dict[str, dict]) -> None:
    where = str(path)
    try:
        data = _toml.loads(path.read_text(encoding="utf-8"))
    except (OSError, _toml.TOMLDecodeError) as exc:
        raise CatalogError(f"{where}: {exc}") from exc
    framework = _table(data, "framework", where).get("name", path.stem)
    for op, entry in _table(data, "collective", where).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("callables"), list):
            raise CatalogError(f"{where}: `collective.{op}.callables` must be a list of names")
        group = entry.get("group", [None, "group"])
        if not (isinstance(group, list) and len(group) == 2):
            raise CatalogError(f"{where}: `collective.{op}.group` must be [position, keyword]")
        for qual in entry["callables"]:
            acc["collectives"][qual] = CollectiveSpec(
                qualname=qual,
                op=op,
                group_position=group[0],
                group_keyword=group[1],
                uniformizes=tuple(entry.get("uniformizes", ())),
                returns_uniform=bool(entry.get("returns_uniform", False)),
                note=str(entry.get("note", "")),
                framework=str(framework),
            )
    sources = _table(data, "rank_source", where)
    acc["rank_calls"].update(_str_map(sources, "calls", where + " [rank_source]"))
    acc["rank_environ"].update(_str_map(sources, "environ", where + " [rank_source]"))
    acc["rank_attributes"].update(_str_map(sources, "attributes", where + " [rank_source]"))
    predicates = _table(data, "rank_predicate", where)
    for key, target in (("attributes", "predicate_attributes"), ("calls", "predicate_calls")):
        for name, text in _str_map(predicates, key, where + " [rank_predicate]").items():
            acc[target][name] = parse_predicate(text, f"{where}: rank_predicate.{key}.{name}")
    exits = _table(data, "exit", where)
    acc["exit_calls"].update(exits.get("calls", ()))


def load_catalog(directory: Optional[Path] = None) -> Catalog:
    return _load_catalog_cached(str(directory or rules_dir()))


@functools.lru_cache(maxsize=8)
def _load_catalog_cached(directory: str) -> Catalog:
    acc: Dict[str, dict] = {
        "collectives": {},
        "rank_calls": {},
        "rank_environ": {},
        "rank_attributes": {},
        "predicate_attributes": {},
        "predicate_calls": {},
        "exit_calls": set(),
    }
    digest = hashlib.sha256()
    files = sorted(p for p in Path(directory).glob("*.toml") if p.name not in _NON_CATALOG_FILES)
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
        _load_file(path, acc)
    return Catalog(
        collectives=acc["collectives"],
        rank_calls=acc["rank_calls"],
        rank_environ=acc["rank_environ"],
        rank_attributes=acc["rank_attributes"],
        predicate_attributes=acc["predicate_attributes"],
        predicate_calls=acc["predicate_calls"],
        exit_calls=frozenset(acc["exit_calls"]),
        fingerprint=digest.hexdigest(),
    )


def all_collective_names(catalog: Catalog) -> Iterable[str]:
    return catalog.collectives.keys()
