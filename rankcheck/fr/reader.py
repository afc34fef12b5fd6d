"""Read flight-recorder dump files (pickle or JSON, every layout in `layouts`) without torch.

Pickles are loaded with an Unpickler that refuses every global: a dump is only dicts, lists,
tuples, strings, numbers, booleans and None, and anything else would mean running code from a
file somebody handed us. The rank of a dump comes from its file name, as torch names them
(`<prefix><rank>`, e.g. `nccl_trace_rank_3`; an extension like `.pkl`/`.json` may follow).
"""

from __future__ import annotations

import io
import json
import os
import pickle
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from rankcheck.fr.layouts import LAYOUTS, REQUIRED_ENTRY_KEYS, describe_known
from rankcheck.fr.model import DumpError, Entry, Frame, GroupStatus, RankDump

_RANK_IN_NAME = re.compile(r"(\d+)(?:\.(?:pkl|pickle|json|bin|dump|trace))?$", re.IGNORECASE)
_INTS = re.compile(r"-?\d+")
# The only globals a plain-data pickle could name (protocol <= 3 spells sets via builtins).
_SAFE_BUILTINS = frozenset(
    {"set", "frozenset", "list", "dict", "tuple", "str", "int", "float", "bool", "bytes",
     "bytearray", "complex"}
)
DEFAULT_GROUP_DESC = "default_pg"


class _PlainDataUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module in ("builtins", "__builtin__") and name in _SAFE_BUILTINS:
            return super().find_class(module, name)
        shown = "builtins" if module == "__builtin__" else module  # protocol 2 spelling
        raise pickle.UnpicklingError(
            f"refusing to load {shown}.{name}: a flight-recorder dump holds only plain "
            "containers and scalars, so this pickle is not one (rankcheck never runs code "
            "from a dump)"
        )

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError(
            "refusing a persistent reference: a flight-recorder dump holds only plain data"
        )


@dataclass
class ReadResult:
    dumps: List[RankDump] = field(default_factory=list)
    # files seen but not used, with why (other files in a dump directory, duplicate formats)
    ignored: List[Tuple[str, str]] = field(default_factory=list)


def rank_from_filename(path: str) -> Optional[int]:
    match = _RANK_IN_NAME.search(os.path.basename(path))
    return int(match.group(1)) if match else None


def load_raw(path: str) -> Tuple[str, dict]:
    """(format, top-level dict) of one file; DumpError when it is not a readable dump."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise DumpError(path, f"cannot read: {exc.strerror or exc}") from exc
    stripped = data.lstrip()
    if not stripped:
        raise DumpError(path, "empty file, not a flight-recorder dump")
    if stripped[:1] in (b"{", b"["):
        fmt = "json"
        try:
            raw = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise DumpError(path, f"not valid JSON: {exc}") from exc
    elif data[:1] == b"\x80":
        fmt = "pickle"
        try:
            raw = _PlainDataUnpickler(io.BytesIO(data)).load()
        except pickle.UnpicklingError as exc:
            raise DumpError(path, str(exc)) from exc
        except Exception as exc:  # truncated or corrupt pickle: many exception types
            raise DumpError(path, f"corrupt pickle: {type(exc).__name__}: {exc}") from exc
    else:
        raise DumpError(path, "not a flight-recorder dump (neither a pickle nor JSON)")
    if isinstance(raw, list):
        raise DumpError(
            path,
            "the top level is a list, the layout torch wrote before dumps had a version "
            f"(torch < 2.3); known versions: {describe_known()}",
        )
    if not isinstance(raw, dict) or "version" not in raw:
        raise DumpError(path, "not a flight-recorder dump: no top-level 'version' key")
    return fmt, raw


def _as_int(value: Any, default: int = -1) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return default
    if isinstance(value, float):
        return int(value)
    return default


def _sizes(value: Any) -> tuple:
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(
        tuple(_as_int(d, 0) for d in arg) if isinstance(arg, (list, tuple)) else (_as_int(arg, 0),)
        for arg in value
    )


def _strings(value: Any) -> Tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(str(v) for v in value)


def _frames(value: Any) -> Tuple[Frame, ...]:
    if not isinstance(value, (list, tuple)):
        return ()
    frames = []
    for item in value:
        if isinstance(item, dict):
            frames.append(
                Frame(
                    filename=str(item.get("filename", "")),
                    line=_as_int(item.get("line"), 0),
                    function=str(item.get("name", "")),
                )
            )
    return tuple(frames)


def _split_profiling_name(name: str) -> str:
    """'gloo:all_reduce' -> 'all_reduce'; 'nccl:send 0->1' -> 'send'."""
    op = name.split(":", 1)[1] if ":" in name else name
    return op.split(" ", 1)[0] if op else name


def _entry(path: str, index: int, raw: Any) -> Entry:
    if not isinstance(raw, dict):
        raise DumpError(path, f"entry #{index} is a {type(raw).__name__}, not a dict")
    for key in REQUIRED_ENTRY_KEYS:
        if key not in raw:
            raise DumpError(path, f"entry #{index} lacks the key {key!r}")
    pg = raw.get("process_group")
    pg_id = str(_as_int(raw.get("pg_id"), -1)) if "pg_id" in raw else ""
    if isinstance(pg, (list, tuple)) and len(pg) >= 1:
        group = str(pg[0])
        desc = str(pg[1]) if len(pg) > 1 else ""
    elif pg_id:
        group, desc = pg_id, ""
    else:
        raise DumpError(path, f"entry #{index} names no process group (process_group/pg_id)")
    profiling_name = str(raw["profiling_name"])
    op = _split_profiling_name(profiling_name)
    is_p2p = bool(raw.get("is_p2p", op in ("send", "recv")))
    created = raw.get("time_created_ns")
    return Entry(
        group=group,
        group_desc=desc,
        seq=_as_int(raw["collective_seq_id"], 0),
        op=op,
        profiling_name=profiling_name,
        is_p2p=is_p2p,
        input_sizes=_sizes(raw.get("input_sizes")),
        output_sizes=_sizes(raw.get("output_sizes")),
        input_dtypes=_strings(raw.get("input_dtypes")),
        output_dtypes=_strings(raw.get("output_dtypes")),
        state=str(raw.get("state", "")),
        retired=bool(raw.get("retired", False)),
        record_id=_as_int(raw.get("record_id"), -1),
        pg_id=pg_id,
        time_created_ns=created if isinstance(created, int) and created > 0 else None,
        frames=_frames(raw.get("frames")),
    )


def _group_ranks(raw_config: Any) -> Tuple[Dict[str, Tuple[int, ...]], Tuple[int, ...]]:
    """pg_config -> ({group name: ranks}, every rank mentioned)."""
    by_group: Dict[str, Tuple[int, ...]] = {}
    mentioned: Set[int] = set()
    if not isinstance(raw_config, dict):
        return by_group, ()
    for key, info in raw_config.items():
        if not isinstance(info, dict):
            continue
        ranks_text = info.get("ranks", "")
        ranks = tuple(
            int(r) for r in _INTS.findall(ranks_text if isinstance(ranks_text, str) else str(ranks_text))
        )
        mentioned.update(r for r in ranks if r >= 0)
        name = str(info.get("name", key))
        # torch 2.13 registers gloo groups under the name "": such an entry says nothing about
        # which group it is, so it only widens the world, never a group's membership.
        if name and ranks:
            by_group[name] = ranks
    return by_group, tuple(sorted(mentioned))


def _status(raw_status: Any, entries: Sequence[Entry]) -> Dict[str, GroupStatus]:
    """pg_status is keyed by the local pg id; entries tell which group name that id has."""
    if not isinstance(raw_status, dict):
        return {}
    name_of_id = {e.pg_id: e.group for e in entries if e.pg_id}
    default_name = next((e.group for e in entries if e.group_desc == DEFAULT_GROUP_DESC), "0")
    result: Dict[str, GroupStatus] = {}
    for pg_id, counters in raw_status.items():
        if not isinstance(counters, dict):
            continue
        pg_id = str(pg_id)
        name = name_of_id.get(pg_id) or (default_name if pg_id == "0" else pg_id)
        result[name] = GroupStatus(
            last_enqueued=_as_int(counters.get("last_enqueued_collective")),
            last_started=_as_int(counters.get("last_started_collective")),
            last_completed=_as_int(counters.get("last_completed_collective")),
        )
    return result


def read_dump(path: str, rank: Optional[int] = None) -> RankDump:
    """One file -> RankDump. Raises DumpError with a message a user can act on."""
    if rank is None:
        rank = rank_from_filename(path)
        if rank is None:
            raise DumpError(
                path,
                "cannot tell which rank wrote this file: torch names dumps <prefix><rank> "
                "(e.g. nccl_trace_rank_0); rename it so that the name ends in its rank",
            )
    fmt, raw = load_raw(path)
    version = str(raw.get("version"))
    layout = LAYOUTS.get(version)
    if layout is None:
        raise DumpError(
            path,
            f"unknown flight-recorder dump version {version!r}; known versions: "
            f"{describe_known()}",
        )
    if fmt not in layout.formats:
        raise DumpError(
            path,
            f"a {fmt} dump claiming version {version}, which torch only wrote as "
            f"{' and '.join(layout.formats)}",
        )
    raw_entries = raw.get("entries", [])
    if not isinstance(raw_entries, (list, tuple)):
        raise DumpError(path, "'entries' is not a list")
    entries = tuple(_entry(path, i, e) for i, e in enumerate(raw_entries))
    group_ranks, config_ranks = _group_ranks(raw.get("pg_config"))
    library = raw.get("comm_lib_version") or raw.get("nccl_version") or ""
    return RankDump(
        rank=rank,
        path=path,
        format=fmt,
        version=version,
        entries=entries,
        status=_status(raw.get("pg_status"), entries),
        group_ranks=group_ranks,
        config_ranks=config_ranks,
        has_stacks=any(e.frames for e in entries),
        library=str(library),
    )


def _candidate_files(target: str) -> Tuple[List[str], List[Tuple[str, str]]]:
    """Files to read from one command-line argument, and files skipped in directories."""
    if os.path.isdir(target):
        chosen, skipped = [], []
        for root, dirs, files in os.walk(target):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.startswith("."):
                    continue
                path = os.path.join(root, name)
                if rank_from_filename(path) is None:
                    skipped.append((path, "name does not end in a rank number"))
                else:
                    chosen.append(path)
        return chosen, skipped
    if os.path.exists(target):
        return [target], []
    raise DumpError(target, "no such file or directory")


def read_dumps(targets: Iterable[str]) -> ReadResult:
    """Read every dump named by the arguments (files or directories).

    One dump per rank is used. When a rank has both a pickle and a JSON dump (a directory holding
    both), the pickle wins because only pickle dumps carry stacks; the other is listed as ignored.
    Two dumps of the same format for one rank are an error: which one to believe is the user's call.
    """
    result = ReadResult()
    by_rank: Dict[int, RankDump] = {}
    for target in targets:
        files, skipped = _candidate_files(target)
        result.ignored.extend(skipped)
        if os.path.isdir(target) and not files:
            raise DumpError(target, "no dump files in this directory (names must end in a rank)")
        for path in files:
            dump = read_dump(path)
            previous = by_rank.get(dump.rank)
            if previous is None:
                by_rank[dump.rank] = dump
            elif os.path.realpath(previous.path) == os.path.realpath(path):
                continue
            elif previous.format != dump.format:
                keep, drop = (previous, dump) if previous.format == "pickle" else (dump, previous)
                by_rank[dump.rank] = keep
                result.ignored.append(
                    (drop.path,
                     f"rank {dump.rank} also has a pickle dump ({keep.path}), which carries stacks")
                )
            else:
                raise DumpError(
                    path, f"a second {dump.format} dump for rank {dump.rank} (first: {previous.path})"
                )
    result.dumps = [by_rank[r] for r in sorted(by_rank)]
    return result
