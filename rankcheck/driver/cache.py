"""The on-disk summary cache: one entry per module text, so an unchanged file is never parsed twice.

Layout (`.rankcheck_cache/` by default, like ruff's and mypy's caches):

    CACHEDIR.TAG                     backup tools skip the directory
    .gitignore                       `*`: git never sees it
    v1-<salt>/                       one namespace per cache format, rankcheck version, Python
                                     version, libcst version and *source* of the summarizer, so
                                     editing the front end or the IR starts a fresh namespace
        stat-index                   path -> (size, mtime_ns, ctime_ns, inode, digest): the stat
                                     fast path that skips reading and hashing unchanged files
        m/ab/<key>                   one entry: scan, minimal summary and/or full summary
        r/<key>                      whole-run results (`ResultStore`), the 16 latest
        last-used                    touched by the runs of this namespace (at most daily)
    last-sweep                       when the cache was last swept (below)

An entry's key is the SHA-256 of (content digest, module name, is_package), and of the file's
import map when it has one (`driver.identity`: what its absolute imports find beside it under
another name, empty on a project whose files all have names of their own); the display path is
not part of it (the summary's path is re-stamped on load), so moving the working directory keeps
the cache warm. Entries are pickles that only we write, but a file is unpickled only after its
header (magic + namespace) matches, and whatever fails to load (truncated, corrupt, foreign) is a
miss that gets rebuilt. Every write is a temp file + `os.replace`, so two runs sharing the cache
see whole entries or none; the stat index is merged with what is on disk before it is replaced, and
since it only ever maps a stat to a digest that was true, a lost update costs a re-hash, never a
wrong answer. A file modified within `RACY_SECONDS` of being read is not recorded in the index
(git's "racily clean" rule): its mtime could still change without its size changing.

Eviction, by age of last use. An entry's mtime says when a run last wrote or read it (a read
touches an entry whose mtime is over a day old, so a run costs at most one `utime` per entry and
day). Once a day, at the end of a run, the cache is swept: entries no run used for
`RANKCHECK_CACHE_MAX_AGE_DAYS` (30 by default) are deleted, and so are other namespaces (older
rankcheck, libcst or Python versions) no run used for as long, stat-index lines of files that no
longer exist, and temporary files a killed run left (a day old: a run may be writing a newer
one). Two runs may sweep at once: each deletion either happens or finds the file gone, and an
entry deleted under a run's feet is a miss that gets rebuilt. A cache carried between CI runs
therefore stays the size of what the last month used.
"""

from __future__ import annotations

import ast
import hashlib
import os
import pickle
import re
import shutil
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from rankcheck import __version__
from rankcheck.program.ir import ModuleSummary

if TYPE_CHECKING:
    from rankcheck.driver.prefilter import Scan

CACHE_FORMAT = 2  # 2: entries hold the import map
MAGIC = b"rankcheck-cache\x00"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by rankcheck.\n"
    "# For information about cache directory tags, see:\n"
    "#\thttps://bford.info/cachedir/\n"
)
RACY_SECONDS = 2.0
DAY_SECONDS = 86400.0
DEFAULT_MAX_AGE_DAYS = 30.0
_NAMESPACE_NAME = re.compile(r"v[0-9]+-[0-9a-f]+")
MEMORY_ENTRIES = 20000  # entries kept in memory across runs of one process (the language server)
PICKLE_PROTOCOL = 4  # Python >= 3.4 reads it; 5 would need 3.8 (fine) but gains nothing here

# The summarizer's entry point: its source, and that of every rankcheck module it imports (at
# any depth), decides what a cached summary holds, so editing any of them changes the namespace
# (the text scan has its own fingerprint, `prefilter.scan_fingerprint`; the entry format is
# CACHE_FORMAT).
SUMMARIZER_MODULE = "rankcheck.frontend.lower"

StatKey = Tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode
ImportMap = Tuple[Tuple[str, str], ...]  # SourceFile.import_map


def text_digest(text: str) -> str:
    """Digest of an unsaved buffer (a different domain from file bytes: no decoding involved)."""
    return "t" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def bytes_digest(data: bytes) -> str:
    return "b" + hashlib.sha256(data).hexdigest()


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_size, st.st_mtime_ns, getattr(st, "st_ctime_ns", 0), st.st_ino)


def racily_clean(mtime_ns: int, seen_ns: int) -> bool:
    """Whether something modified at `mtime_ns` and looked at at `seen_ns` may still change
    without its mtime (or size) changing: a later write in the same mtime tick (git's rule)."""
    return mtime_ns >= seen_ns - int(RACY_SECONDS * 1e9)


_namespace_memo: Optional[str] = None


def namespace() -> str:
    """The cache namespace of this installation: format, versions and summarizer source."""
    global _namespace_memo
    if _namespace_memo is None:
        digest = hashlib.sha256()
        digest.update(f"{CACHE_FORMAT}\0{__version__}\0{sys.version_info[0]}.{sys.version_info[1]}\0".encode())
        digest.update(_libcst_version().encode())
        from rankcheck.driver.prefilter import scan_fingerprint

        digest.update(scan_fingerprint().encode())
        for name, source in summarizer_sources():
            digest.update(name.encode() + b"\0" + source)
        _namespace_memo = f"v{CACHE_FORMAT}-{digest.hexdigest()[:20]}"
    return _namespace_memo


def summarizer_sources() -> List[Tuple[str, bytes]]:
    """(module, source) of the summarizer and of each rankcheck module it imports, transitively,
    in a fixed order: found by reading their import statements, so the set follows the code."""
    package = Path(__file__).resolve().parent.parent
    seen: Dict[str, bytes] = {}
    pending = [SUMMARIZER_MODULE]
    while pending:
        module = pending.pop()
        if module in seen:
            continue
        parts = module.split(".")[1:]
        candidates = [package.joinpath(*parts).with_suffix(".py"), package.joinpath(*parts, "__init__.py")]
        path = next((c for c in candidates if c.is_file()), None)
        if path is None:
            continue  # a name imported from a module, not a module
        source = path.read_bytes()
        seen[module] = source
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rankcheck") and not node.level:
                pending.append(node.module)
                pending.extend(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                pending.extend(alias.name for alias in node.names if alias.name.startswith("rankcheck"))
    return sorted(seen.items())


def _libcst_version() -> str:
    try:
        from importlib.metadata import version

        return version("libcst")
    except Exception:
        return "unknown"


@dataclass
class Entry:
    """What the cache knows about one module text. `full` is unpickled on first use."""

    digest: str
    module: str
    is_package: bool
    import_map: ImportMap = ()
    scan: Optional[Scan] = None  # what prefilter.scan_text found
    light: Optional[ModuleSummary] = None  # minimal summary (None: not computed, or it had a problem)
    _full: Optional[ModuleSummary] = None
    _full_blob: Optional[bytes] = None
    dirty: bool = field(default=False, compare=False)

    @property
    def has_full(self) -> bool:
        return self._full is not None or self._full_blob is not None

    def full(self) -> Optional[ModuleSummary]:
        if self._full is None and self._full_blob is not None:
            try:
                value = pickle.loads(self._full_blob)
            except Exception:
                value = None
            if not self.dirty:
                self._full_blob = None  # on disk already: keep only the objects
            self._full = value if isinstance(value, ModuleSummary) else None
        return self._full

    def set_full(self, summary: ModuleSummary) -> None:
        self._full, self._full_blob, self.dirty = summary, None, True

    def set_full_blob(self, blob: bytes) -> None:
        """A summary pickled by a worker: kept as bytes until used, and written as is."""
        self._full, self._full_blob, self.dirty = None, blob, True

    def full_blob(self) -> Optional[bytes]:
        if self._full_blob is None and self._full is not None:
            return pickle.dumps(self._full, protocol=PICKLE_PROTOCOL)
        return self._full_blob


def _entry_key(digest: str, module: str, is_package: bool, import_map: ImportMap = ()) -> str:
    shared = f"\0{import_map!r}" if import_map else ""  # the key of a file without one is as it was
    # A file name that is not UTF-8 (`bad\xffname.py`) reaches here as a lone surrogate: its bytes.
    return hashlib.sha256(f"{digest}\0{module}\0{int(is_package)}{shared}".encode("utf-8", "surrogateescape")).hexdigest()


def restamp(summary: ModuleSummary, path: str) -> ModuleSummary:
    return summary if summary.path == path else replace(summary, path=path)


# Entries and stat indexes survive between runs of one process (the language server re-checks on
# every edit): keyed by namespace directory, bounded.
_memory_lock = threading.Lock()
_memory: OrderedDict[Tuple[str, str], Entry] = OrderedDict()
_index_memory: Dict[str, Tuple[Tuple[int, int], Dict[str, Tuple[StatKey, str]]]] = {}


def ensure_layout(directory: Path) -> bool:
    """Create the cache directory with CACHEDIR.TAG and a `*` .gitignore; False if not writable."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", "# Created by rankcheck\n*\n")):
            target = directory / name
            if not target.exists():
                _atomic_write(target, text.encode())
        return True
    except OSError:
        return False


def _atomic_write(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=str(target.parent), prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class SummaryCache:
    def __init__(self, directory: Path) -> None:
        self.root = Path(directory)
        self.writable = ensure_layout(self.root)
        self.space = self.root / namespace()
        self._index_path = self.space / "stat-index"
        self._header = _namespace_header(self.space.name)
        self._index = self._load_index()
        self._index_updates: Dict[str, Tuple[StatKey, str]] = {}
        self.hits = 0
        self.misses = 0

    # -------------------------------------------------------------- stat fast path
    def _load_index(self) -> Dict[str, Tuple[StatKey, str]]:
        try:
            st = self._index_path.stat()
        except OSError:
            return {}
        signature = (st.st_mtime_ns, st.st_size)
        key = str(self._index_path)
        with _memory_lock:
            remembered = _index_memory.get(key)
        if remembered is not None and remembered[0] == signature:
            return remembered[1]
        index = self._read_index()
        with _memory_lock:
            _index_memory[key] = (signature, index)
        return index

    def _read_index(self) -> Dict[str, Tuple[StatKey, str]]:
        return _read_index_file(self._index_path, self._header)

    def digest_from_stat(self, path: str, st: os.stat_result) -> Optional[str]:
        known = self._index.get(path)
        if known is not None and known[0] == stat_key(st):
            return known[1]
        return None

    def note_stat(self, path: str, st: os.stat_result, digest: str, read_started_ns: int) -> None:
        if racily_clean(st.st_mtime_ns, read_started_ns):
            return  # a later write in the same mtime tick could go unnoticed
        key = stat_key(st)
        known = self._index.get(path)
        if known is None or known != (key, digest):
            self._index_updates[path] = (key, digest)

    # -------------------------------------------------------------- entries
    def _entry_path(self, key: str) -> Path:
        return self.space / "m" / key[:2] / key[2:]

    def load(self, digest: str, module: str, is_package: bool, import_map: ImportMap = ()) -> Optional[Entry]:
        key = _entry_key(digest, module, is_package, import_map)
        memory_key = (str(self.space), key)
        with _memory_lock:
            entry = _memory.get(memory_key)
            if entry is not None:
                _memory.move_to_end(memory_key)
        if entry is None:
            entry = self._read_entry(key, digest, module, is_package, import_map)
            if entry is not None:
                self._remember(memory_key, entry)
        if entry is None:
            self.misses += 1
        else:
            self.hits += 1
        return entry

    def _read_entry(self, key: str, digest: str, module: str, is_package: bool, import_map: ImportMap) -> Optional[Entry]:
        path = self._entry_path(key)
        try:
            with open(path, "rb") as handle:
                data = handle.read()
                used = os.fstat(handle.fileno()).st_mtime
        except OSError:
            return None
        if not data.startswith(self._header):
            return None
        try:
            fields = pickle.loads(data[len(self._header):])
            got_digest, got_module, got_package, got_map, scan, light, full_blob = fields
        except Exception:
            return None
        if (got_digest, got_module, got_package, got_map) != (digest, module, is_package, import_map):
            return None
        from rankcheck.driver.prefilter import Scan

        if scan is not None and not isinstance(scan, Scan):
            return None
        if light is not None and not isinstance(light, ModuleSummary):
            return None
        if full_blob is not None and not isinstance(full_blob, bytes):
            return None
        _note_use(path, used, self.writable)
        return Entry(digest, module, is_package, import_map, scan=scan, light=light, _full_blob=full_blob)

    def _remember(self, memory_key: Tuple[str, str], entry: Entry) -> None:
        with _memory_lock:
            _memory[memory_key] = entry
            _memory.move_to_end(memory_key)
            while len(_memory) > MEMORY_ENTRIES:
                _memory.popitem(last=False)

    def store(self, entry: Entry) -> None:
        """Write an entry that changed (atomically); failures leave the cache as it was."""
        key = _entry_key(entry.digest, entry.module, entry.is_package, entry.import_map)
        self._remember((str(self.space), key), entry)
        if not entry.dirty or not self.writable:
            return
        full_blob = entry.full_blob()
        payload = (entry.digest, entry.module, entry.is_package, entry.import_map, entry.scan, entry.light, full_blob)
        try:
            _atomic_write(self._entry_path(key), self._header + pickle.dumps(payload, protocol=PICKLE_PROTOCOL))
            entry.dirty = False
            if entry._full is not None:
                entry._full_blob = None
        except OSError:
            self.writable = False

    def close(self) -> None:
        """Merge this run's stat observations into the index on disk; mark the namespace used,
        and sweep the cache when a day has passed since the last sweep."""
        if not self.writable:
            return
        marker = self.space / "last-used"
        try:
            _note_use(marker, marker.stat().st_mtime, True)
        except OSError:
            try:
                _atomic_write(marker, b"")
            except OSError:
                pass
        self._write_index()
        if sweep_due(self.root):
            sweep(self.root)

    def _write_index(self) -> None:
        if not self._index_updates:
            return
        merged = dict(self._read_index())
        merged.update(self._index_updates)
        try:
            _write_index_file(self._index_path, self._header, merged)
            st = self._index_path.stat()
            with _memory_lock:
                _index_memory[str(self._index_path)] = ((st.st_mtime_ns, st.st_size), merged)
        except OSError:
            self.writable = False
        self._index_updates = {}
        self._index = merged


def _note_use(path: Path, mtime: float, writable: bool) -> None:
    """Record that a run used `path` (its mtime is when a run last used it), at most daily."""
    if writable and time.time() - mtime > DAY_SECONDS:
        try:
            os.utime(path)
        except OSError:
            pass


def max_age_days() -> float:
    """`RANKCHECK_CACHE_MAX_AGE_DAYS`, or 30; a value that is not a positive number is ignored."""
    value = os.environ.get("RANKCHECK_CACHE_MAX_AGE_DAYS", "")
    try:
        days = float(value)
    except ValueError:
        return DEFAULT_MAX_AGE_DAYS
    return days if days > 0 else DEFAULT_MAX_AGE_DAYS


def sweep_due(root: Path) -> bool:
    try:
        return time.time() - (Path(root) / "last-sweep").stat().st_mtime > DAY_SECONDS
    except OSError:
        return True


@dataclass
class SweepReport:
    entries: int = 0  # summary entries of this namespace deleted
    namespaces: int = 0  # other namespaces deleted
    index_lines: int = 0  # stat-index lines of files that no longer exist


def sweep(root: Path, days: Optional[float] = None) -> SweepReport:
    """Delete what no run used for `days` (default `max_age_days()`): see the module docstring."""
    root = Path(root)
    report = SweepReport()
    try:
        _atomic_write(root / "last-sweep", b"")  # first: a concurrent run does not start another
    except OSError:
        return report
    now = time.time()
    limit = now - (days if days is not None else max_age_days()) * DAY_SECONDS
    current = root / namespace()
    try:
        spaces = [p for p in root.iterdir() if p.is_dir() and _NAMESPACE_NAME.fullmatch(p.name)]
    except OSError:
        spaces = []
    for space in spaces:
        if space == current:
            continue
        try:
            used = (space / "last-used").stat().st_mtime
        except OSError:
            used = _mtime_or_now(space)
        if used < limit:
            shutil.rmtree(space, ignore_errors=True)
            report.namespaces += 1
    temporary_limit = max(limit, now - DAY_SECONDS)
    for folder in _subdirectories(current / "m"):
        report.entries += _sweep_entries(folder, limit, temporary_limit)
    # The other files written atomically: `last-sweep`, the stat index, the whole-run results.
    for folder in (root, current, current / "r"):
        _sweep_entries(str(folder), float("-inf"), temporary_limit)
    report.index_lines = _drop_missing_from_index(current)
    return report


def _sweep_entries(folder: str, limit: float, temporary_limit: float) -> int:
    """Delete the entries of one folder last used before `limit` (none for -inf), and the
    temporary files a killed run left there (written before `temporary_limit`); returns how many
    entries went."""
    try:
        items = list(os.scandir(folder))
    except OSError:
        return 0
    deleted = 0
    for item in items:
        temporary = item.name.startswith(".tmp-")
        try:
            if item.stat(follow_symlinks=False).st_mtime < (temporary_limit if temporary else limit):
                os.unlink(item.path)
                deleted += not temporary
        except OSError:
            pass  # gone already (another run's sweep), or not ours to delete
    return deleted


def _mtime_or_now(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return time.time()


def _subdirectories(path: Path) -> list:
    try:
        return [item.path for item in os.scandir(path) if item.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _drop_missing_from_index(space: Path) -> int:
    """Stat-index lines of files that are gone (renamed, deleted, another checkout's paths)."""
    header = _namespace_header(space.name)
    index = _read_index_file(space / "stat-index", header)
    kept = {path: known for path, known in index.items() if os.path.exists(path)}
    if len(kept) == len(index):
        return 0
    try:
        _write_index_file(space / "stat-index", header, kept)
    except OSError:
        return 0
    return len(index) - len(kept)


def _namespace_header(space_name: str) -> bytes:
    return MAGIC + space_name.encode() + b"\n"


def _write_index_file(path: Path, header: bytes, index: Dict[str, Tuple[StatKey, str]]) -> None:
    _atomic_write(path, header + pickle.dumps(index, protocol=PICKLE_PROTOCOL))


def _read_index_file(path: Path, header: bytes) -> Dict[str, Tuple[StatKey, str]]:
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    if not data.startswith(header):
        return {}
    try:
        value = pickle.loads(data[len(header):])
    except Exception:
        return {}
    return value if isinstance(value, dict) else {}


RESULTS_KEPT = 16  # whole-run results kept per namespace (one per set of paths and options)


class ResultStore:
    """Whole-run results (the findings) keyed by everything they depend on (see
    `driver.summaries.results_key`): a run whose inputs did not change at all skips the analysis."""

    def __init__(self, directory: Path) -> None:
        self.root = Path(directory)
        self.space = self.root / namespace()
        self._header = MAGIC + b"results " + self.space.name.encode() + b"\n"

    def load(self, key: str) -> Optional[object]:
        try:
            data = (self.space / "r" / key).read_bytes()
        except OSError:
            return None
        if not data.startswith(self._header):
            return None
        try:
            stored_key, value = pickle.loads(data[len(self._header):])
        except Exception:
            return None
        return value if stored_key == key else None

    def store(self, key: str, value: object) -> None:
        if not ensure_layout(self.root):
            return
        directory = self.space / "r"
        try:
            _atomic_write(directory / key, self._header + pickle.dumps((key, value), protocol=PICKLE_PROTOCOL))
            kept = sorted(directory.iterdir(), key=lambda p: p.stat().st_mtime_ns, reverse=True)
            for old in kept[RESULTS_KEPT:]:
                if not old.name.startswith(".tmp-"):
                    old.unlink()
        except (OSError, pickle.PicklingError):
            pass


_package_memo: Optional[str] = None


def package_fingerprint() -> str:
    """Digest of the whole rankcheck package source: the analysis changes with any of it."""
    global _package_memo
    if _package_memo is None:
        digest = hashlib.sha256()
        here = Path(__file__).resolve().parent.parent
        for path in sorted(here.rglob("*.py")):
            try:
                digest.update(str(path.relative_to(here)).encode() + b"\0" + path.read_bytes())
            except OSError:
                digest.update(str(path).encode() + b"\0missing")
        _package_memo = digest.hexdigest()
    return _package_memo


def forget_memory() -> None:
    """Drop what this process remembers (tests use it to read the disk as a new process would)."""
    with _memory_lock:
        _memory.clear()
        _index_memory.clear()


def now_ns() -> int:
    return time.time_ns()
