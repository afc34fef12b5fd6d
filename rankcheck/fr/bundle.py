"""The verdict on a run-time guard's bundle (`rankcheck.runtime`): which rank, which collective,
which line, and the cause. Torch-free: `rankcheck fr BUNDLE` reads a bundle again later.

The flight recorder's sequence numbers come first when the dumps are there (the FR analysis of
`rankcheck.fr.analyze`, over the bundle's per-rank dumps); the heartbeats (what each rank was
inside, per process group) and the stacks (where a rank outside a collective is) classify:

- crashed: a rank's process is gone (exit code or signal from the launcher when known) or its
  heartbeat stopped, while the others wait;
- outside: some ranks wait in a collective that another never entered, and that rank is not in
  any collective (its stack says where: a data loader, I/O, a sleep);
- different: the ranks are inside different collectives (op or sequence number): code divergence;
  the odd rank's line is looked up in rankcheck's static findings;
- same: every rank is inside the same collective: the network or a host, not the code;
- host: every rank completed the same collective and none is inside another: blocked on the host;
- straggler: no hang, but one rank computes many times longer per step than the others.
"""

from __future__ import annotations

import json
import os
import signal
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from rankcheck.fr.analyze import ranks_text
from rankcheck.fr.frames import is_user_frame
from rankcheck.fr.model import Frame

CRASHED, OUTSIDE, DIFFERENT, SAME, HOST, STRAGGLER, RUNNING = (
    "crashed", "outside", "different", "same", "host", "straggler", "running")
CAUSE_TEXT = {
    CRASHED: "a rank crashed or exited",
    OUTSIDE: "blocked outside a collective",
    DIFFERENT: "ranks in different collectives (code divergence)",
    SAME: "all ranks in the same collective (network or host side)",
    HOST: "all ranks blocked on the host after the same collective",
    STRAGGLER: "a straggler",
    RUNNING: "no hang: the ranks are progressing",
}
HANG_CAUSES = frozenset({CRASHED, OUTSIDE, DIFFERENT, SAME, HOST})
# How the wrappers key a process group (rankcheck.verify.instrument, which needs torch) and the
# flight recorder's name for the default one.
WORLD_GROUP_KEY = "world"
DEFAULT_GROUP_NAME = "0"
_RANKCHECK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


@dataclass(frozen=True)
class BundleVerdict:
    cause: str
    text: str
    ranks: Tuple[int, ...] = ()  # the ranks the verdict names
    collective: Optional[dict] = None  # {"group", "seq", "op"} of the collective in question
    site: Optional[str] = None  # path:line of the named rank (or of the collective)
    static: str = ""  # the static finding on that line, when one matches
    data: Dict[str, Any] = field(default_factory=dict)

    @property
    def is_hang(self) -> bool:
        return self.cause in HANG_CAUSES

    def as_json(self) -> dict:
        return {"cause": self.cause, "cause_text": CAUSE_TEXT[self.cause], "ranks": list(self.ranks),
                "collective": self.collective, "site": self.site, "static": self.static,
                "text": self.text, **self.data}


def is_bundle(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "job.json"))


def _json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def _last_line(path: str) -> Optional[dict]:
    try:
        with open(path, encoding="utf-8") as handle:
            lines = [line for line in handle if line.strip()]
        return json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return None


@dataclass
class RankView:
    rank: int
    beat: Optional[dict] = None
    stack: List[Frame] = field(default_factory=list)  # the main thread's user frames, innermost first
    exit: Optional[dict] = None  # from the launcher: {"exitcode": int}
    has_evidence: bool = False

    def inside(self) -> Optional[Tuple[str, int, str, str]]:
        """(group key, seq, op, group name) of the collective this rank is inside, if any."""
        key = (self.beat or {}).get("in_collective")
        record = (self.beat or {}).get("groups", {}).get(key) if key else None
        if not record:
            return None
        return str(key), int(record["seq"]), str(record["op"]), str(record.get("name", key))

    def unwrapped(self) -> Optional[Tuple[str, int, str, str]]:
        """A collective the flight recorder has enqueued and not completed on this rank while the
        guard's wrappers saw none: DDP's gradient buckets, or a collective bound before arming."""
        for group, (enqueued, completed) in sorted(((self.beat or {}).get("flight") or {}).items()):
            if enqueued > max(completed, 0) and enqueued > self.returned_through(group):
                return f"fr:{group}", int(enqueued), "", group
        return None

    def in_recorder_terms(self) -> Optional[Tuple[str, int, str, str]]:
        """The wrapped collective this rank is inside, named as the flight recorder counts it
        (its group and sequence number), to compare with ranks only the recorder sees waiting."""
        inside = self.inside()
        if inside is None:
            return None
        for group, (enqueued, completed) in ((self.beat or {}).get("flight") or {}).items():
            if enqueued > max(completed, 0) and _same_group(inside[0], group):
                return f"fr:{group}", int(enqueued), "", group
        return inside

    def returned_through(self, group: str) -> int:
        """The highest sequence number of a wrapped collective on the recorder's GROUP that has
        returned to Python. The recorder marks a gloo collective completed a moment after its
        caller goes on, so a heartbeat can show it pending while the rank is elsewhere; a
        collective the wrappers saw return is not one the rank waits in."""
        returned = [int(record.get("seq") or 0) for key, record in ((self.beat or {}).get("groups") or {}).items()
                    if record.get("returned") is not None
                    and _same_group(key, group)]
        return max(returned, default=0)

    def site(self, key: Optional[str] = None) -> Optional[str]:
        groups = (self.beat or {}).get("groups", {})
        record = groups.get(key or (self.beat or {}).get("in_collective") or "")
        if not record:
            return None
        sites = record.get("sites") or []
        return f"{_short(sites[0][0])}:{sites[0][1]}" if sites else None

    def where(self) -> str:
        frames = self.stack[:3]
        if not frames:
            return "no Python stack recorded"
        return " <- ".join(f"{_short(f.filename)}:{f.line} {f.function}" for f in frames)


def _same_group(wrapper_key: str, recorder_group: str) -> bool:
    if recorder_group == DEFAULT_GROUP_NAME:
        return wrapper_key == WORLD_GROUP_KEY
    return wrapper_key.startswith(f"{recorder_group}:")


_ROOT = {"path": ""}  # the bundle's source root while it is analysed
_FINDINGS: Dict[str, Any] = {}  # file -> its static findings, once per process


def _short(path: str) -> str:
    try:
        relative = os.path.relpath(path, _ROOT["path"] or None)
    except ValueError:
        return path
    return relative if not relative.startswith("..") else path


def _main_stack(path: str) -> List[Frame]:
    stacks = _json(path)
    if not isinstance(stacks, list):
        return []
    for thread in stacks:
        if isinstance(thread, dict) and thread.get("main"):
            frames = [Frame(str(f[0]), int(f[1]), str(f[2])) for f in thread.get("frames") or ()]
            return [f for f in frames if is_user_frame(f) and not f.filename.startswith(_RANKCHECK_DIR)]
    return []


def _views(bundle: str, world: int, beats: Dict[str, dict], exits: Dict[str, dict]) -> Dict[int, RankView]:
    views = {}
    for rank in range(world):
        folder = os.path.join(bundle, f"rank-{rank}")
        view = RankView(rank, has_evidence=os.path.isdir(folder), exit=exits.get(str(rank)))
        view.beat = _last_line(os.path.join(folder, "heartbeat.jsonl")) or beats.get(str(rank))
        view.stack = _main_stack(os.path.join(folder, "stacks.json"))
        views[rank] = view
    return views


def _exit_text(view: RankView) -> str:
    code = (view.exit or {}).get("exitcode")
    if isinstance(code, int) and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name} (exit code {code})"
    if isinstance(code, int):
        return f"exited with code {code}"
    state = (view.beat or {}).get("state")
    if state == "failed":
        return f"failed: {(view.beat or {}).get('error', '')}"
    if state == "exited":
        return "exited"
    return "its heartbeat stopped (process gone or frozen)"


def _last_collective(view: RankView) -> str:
    groups = (view.beat or {}).get("groups") or {}
    if not groups:
        return "no collective recorded"
    key, record = max(groups.items(), key=lambda item: float(item[1].get("entered") or 0))
    state = "inside it" if (view.beat or {}).get("in_collective") == key else "completed"
    site = view.site(key)
    return f"#{record['seq']} {record['op']} (process group {record.get('name', key)})" + (
        f" at {site}" if site else "") + f", {state}"


def _gone(views: Dict[int, RankView], job: dict) -> List[int]:
    listed = set((job.get("detection") or {}).get("gone") or ())
    gone = []
    for rank, view in views.items():
        state = (view.beat or {}).get("state")
        code = (view.exit or {}).get("exitcode")
        crashed_exit = isinstance(code, int) and code != 0 and not view.has_evidence
        if rank in listed or state in ("exited", "failed") or crashed_exit or view.beat is None:
            gone.append(rank)
    return gone


def _static_link(site_path: str, line: int) -> str:
    """What `rankcheck check` says about that line (run on the file, in this process)."""
    if not os.path.isfile(site_path):
        return ""
    try:
        import rankcheck
        from rankcheck.fr.crossref import finding_index

        # the source root the armed process knew (the script's directory by default), not the
        # nearest pyproject.toml's project: the verdict waits for this
        root = _ROOT["path"] if _ROOT["path"] and site_path.startswith(_ROOT["path"]) else os.path.dirname(site_path)
        if site_path not in _FINDINGS:
            _FINDINGS[site_path] = finding_index(rankcheck.check_paths([site_path], root=root))
        index = _FINDINGS[site_path]
    except Exception as exc:
        return f"static analysis could not run: {type(exc).__name__}: {exc}"
    hit = index.get((os.path.realpath(site_path), line)) or index.get((os.path.abspath(site_path), line))
    if hit is None:
        return f"rankcheck check does not flag {_short(site_path)}:{line}"
    finding, role = hit
    loc = finding.location
    return f"static finding: {_short(loc.path)}:{loc.line}: {finding.code} {finding.message} (the line is {role})"


def _site_parts(view: RankView) -> Optional[Tuple[str, int]]:
    key = (view.beat or {}).get("in_collective")
    record = ((view.beat or {}).get("groups") or {}).get(key or "")
    sites = (record or {}).get("sites") or []
    return (str(sites[0][0]), int(sites[0][1])) if sites else None


def _classify(views: Dict[int, RankView], job: dict) -> BundleVerdict:
    detection = job.get("detection") or {}
    gone = _gone(views, job)
    alive = [r for r in views if r not in gone]
    inside = {r: views[r].inside() for r in alive}
    waiting = {r: v for r, v in inside.items() if v is not None}
    hidden: Dict[int, Tuple[str, int, str, str]] = {}
    for r in alive:
        found = views[r].unwrapped() if inside[r] is None else None
        if found is not None:
            hidden[r] = found
    if hidden:
        # Some ranks wait where only the recorder sees them: compare every rank on its terms.
        waiting = {r: views[r].in_recorder_terms() or target for r, target in waiting.items()}
        waiting.update(hidden)
    outside = [r for r in alive if inside[r] is None and r not in hidden]
    lines: List[str] = []

    def collective_json(target) -> dict:
        return {"group": target[3], "group_key": target[0], "seq": target[1], "op": target[2]}

    def waiting_text(ranks: Sequence[int]) -> str:
        target = waiting[ranks[0]]
        site = views[ranks[0]].site()
        unwrapped = ", seen by the flight recorder only" if target[0].startswith("fr:") else ""
        op = f" {target[2]}" if target[2] else ""
        return (f"collective #{target[1]}{op} (process group {target[3]}{unwrapped}), which "
                f"{ranks_text(ranks)} {'is' if len(ranks) == 1 else 'are'} waiting in"
                + (f" at {site}" if site else ""))

    by_target: Dict[Any, List[int]] = defaultdict(list)
    for r, target in waiting.items():
        by_target[target].append(r)
    if gone and (job.get("trigger") != STRAGGLER):
        # The launcher stops the rest of the job once one rank dies (SIGTERM): those are not the cause.
        stopped = [r for r in gone if (views[r].exit or {}).get("exitcode") == -signal.SIGTERM]
        gone = [r for r in gone if r not in stopped] or gone
        for r in gone:
            lines.append(f"rank {r} {_exit_text(views[r])}; its last collective: {_last_collective(views[r])}")
        for r in stopped:
            if r not in gone:
                lines.append(f"rank {r} was stopped by the launcher afterwards; its last collective: "
                             f"{_last_collective(views[r])}")
                alive.append(r)
        if by_target:
            biggest = max(by_target.values(), key=len)
            lines.append(f"{ranks_text(sorted(set(alive)))} cannot go on: {waiting_text(sorted(biggest))}")
        site = views[gone[0]].site()
        return BundleVerdict(CRASHED, "", tuple(gone), None, site, data={"lines": lines})
    if job.get("trigger") == STRAGGLER:
        compute = {int(r): float(v) for r, v in (detection.get("compute_s") or {}).items()}
        slow = int(detection["slow_rank"]) if detection.get("slow_rank") is not None else -1
        others = sorted(v for r, v in compute.items() if r != slow)
        typical = others[len(others) // 2] if others else 0.0
        ratio = compute.get(slow, 0.0) / typical if typical else float("inf")
        lines.append(f"rank {slow} computes {compute.get(slow, 0.0):.3f} s per step, the others "
                     f"{typical:.3f} s (median): {ratio:.1f}x slower; the others wait for it in "
                     "every collective")
        lines.append("per-rank compute per step: " + ", ".join(f"rank {r} {v:.3f} s" for r, v in sorted(compute.items())))
        if slow in views:
            lines.append(f"rank {slow} is in: {views[slow].where()}")
        return BundleVerdict(STRAGGLER, "", (slow,) if slow >= 0 else (), data={"lines": lines})
    if waiting and outside:
        target, ranks = max(by_target.items(), key=lambda item: len(item[1]))
        lines.append(f"{ranks_text(outside)} never entered {waiting_text(sorted(ranks))}")
        for r in outside:
            lines.append(f"rank {r} is in: {views[r].where()} (not in a collective: stuck outside, "
                         "e.g. a data loader)")
        site = f"{_short(views[outside[0]].stack[0].filename)}:{views[outside[0]].stack[0].line}" if views[outside[0]].stack else None
        return BundleVerdict(OUTSIDE, "", tuple(outside), collective_json(target), site, data={"lines": lines})
    if len(by_target) > 1:
        ordered = sorted(by_target.items(), key=lambda item: (-len(item[1]), min(item[1])))
        statics = {}
        for target, ranks in ordered:
            parts = _site_parts(views[ranks[0]])
            statics[target] = _static_link(*parts) if parts else ""
        odd = ordered[-1]
        if len(ordered[0][1]) == len(odd[1]):
            # Equal sides (two ranks): the side whose line the static analysis flags is the
            # likelier culprit (a collective only some ranks reach).
            flagged = [item for item in ordered if statics[item[0]].startswith("static finding")]
            odd = flagged[0] if flagged else odd
        for target, ranks in ordered:
            site = views[ranks[0]].site()
            lines.append(f"{ranks_text(sorted(ranks))} {'is' if len(ranks) == 1 else 'are'} in collective "
                         f"#{target[1]} {target[2]} (process group {target[3]})" + (f" at {site}" if site else ""))
        lines.append("the ranks run different collectives: the code diverged "
                     f"(the odd one out: {ranks_text(sorted(odd[1]))})")
        static = statics[odd[0]]
        if static:
            lines.append(static)
        return BundleVerdict(DIFFERENT, "", tuple(sorted(odd[1])), collective_json(odd[0]),
                             views[odd[1][0]].site(), static, data={"lines": lines})
    if waiting:
        target, ranks = next(iter(by_target.items()))
        lines.append(f"every rank is inside {waiting_text(sorted(ranks))}, with none missing: "
                     "not a code divergence; look at the network, the transport or a host")
        return BundleVerdict(SAME, "", tuple(sorted(ranks)), collective_json(target), views[ranks[0]].site(),
                             data={"lines": lines})
    if outside and not detection.get("kind") == "hang":
        lines.append("the ranks are progressing (evidence taken on request)")
        for r in outside:
            lines.append(f"rank {r} is in: {views[r].where()}")
        return BundleVerdict(RUNNING, "", (), data={"lines": lines})
    lasts = Counter(_last_collective(views[r]).split(" at ")[0] for r in outside)
    common = lasts.most_common(1)[0][0] if lasts else "none"
    lines.append(f"no rank is inside a collective; the last collective of every rank: {common}")
    for r in outside:
        lines.append(f"rank {r} is in: {views[r].where()}")
    lines.append("the collectives are not the problem: every rank waits on something on the host "
                 "(a file, a lock, a socket, a process outside the job)")
    return BundleVerdict(HOST, "", tuple(outside), data={"lines": lines})


def _fr_summary(bundle: str, world: int) -> Tuple[str, Optional[dict]]:
    from rankcheck.fr.analyze import analyze
    from rankcheck.fr.model import DumpError
    from rankcheck.fr.reader import read_dump
    from rankcheck.fr.render import verdict_json

    dumps = []
    for rank in range(world):
        path = os.path.join(bundle, f"rank-{rank}", f"fr_trace_rank_{rank}")
        if os.path.isfile(path):
            try:
                dumps.append(read_dump(path, rank))
            except DumpError:
                continue
    if not dumps:
        return "", None
    primary = analyze(dumps, world_size=world).primary
    if primary is None:
        return "", None
    return f"flight recorder: {primary.kind}: {primary.summary}", verdict_json(primary)


def analyze_bundle(bundle: str) -> BundleVerdict:
    job = _json(os.path.join(bundle, "job.json")) or {}
    world = int(job.get("world_size") or 0)
    beats = _json(os.path.join(bundle, "heartbeats.json")) or {}
    launcher = _json(os.path.join(bundle, "launcher.json")) or {}
    exits = launcher.get("ranks") or {}
    world = max([world] + [int(r) + 1 for r in list(beats) + list(exits)])
    _ROOT["path"] = str(job.get("source_root") or "")
    views = _views(bundle, world, beats, exits)
    verdict = _classify(views, job)
    lines = list(verdict.data.get("lines", []))
    fr_line, fr_json = _fr_summary(bundle, world) if verdict.cause != STRAGGLER else ("", None)
    if fr_line:
        lines.append(fr_line)
    cause, ranks = verdict.cause, verdict.ranks
    if cause == SAME and fr_json and fr_json.get("kind") == "mismatch":
        # The heartbeats only know the op; the recorder knows the shapes and dtypes: the same
        # collective with different arguments is a code divergence, not the network.
        variants = ((fr_json.get("mismatch") or {}).get("variants")) or []
        cause = DIFFERENT
        ranks = tuple(variants[-1]["ranks"]) if variants else ranks
        lines.append("the ranks are in the same collective with different arguments: the code diverged")
    detection = job.get("detection") or {}
    trigger = job.get("trigger", "")
    if trigger == "hang":
        typical = detection.get("typical_s")
        head = (f"rankcheck: hang detected {float(detection.get('stalled_s', 0)):.1f} s after the last progress"
                + (f" (median {detection.get('typical_what', 'step')} {typical:.2f} s)" if typical else ""))
    elif trigger == STRAGGLER:
        head = "rankcheck: straggler detected (the job is progressing, slowly)"
    elif trigger == "crash":
        head = "rankcheck: a rank of the job is gone"
    else:
        head = f"rankcheck: evidence collected ({trigger or 'on request'})"
    shown = bundle.rstrip(os.sep) + os.sep
    text = "\n".join([head] + [f"  {line}" for line in lines]
                     + [f"  cause: {CAUSE_TEXT[cause]}          evidence: {shown}"]) + "\n"
    data = {"lines": lines, "trigger": trigger, "detection": detection, "evidence": shown,
            "flight_recorder": fr_json, "world_size": world}
    return BundleVerdict(cause, text, ranks, verdict.collective, verdict.site, verdict.static, data)


def write_verdict(bundle: str, verdict: BundleVerdict) -> None:
    from rankcheck.runtime.bundle import VERDICT_JSON, VERDICT_TEXT, write_file, write_json

    write_file(os.path.join(bundle, VERDICT_TEXT), verdict.text.encode("utf-8"))
    write_json(os.path.join(bundle, VERDICT_JSON), verdict.as_json())
