"""Where the run-time guard writes, and how: the dump directory's layout (torch-free).

    DUMP_DIR/
      .live/JOB/rank-R.json          each rank's heartbeat, rewritten every interval
      .live/JOB/request              a request for evidence: the bundle's name (`rankcheck dump`
                                     or the rank that detected a hang writes it)
      BUNDLE/                        one per detection or request, e.g. 2026-12-02T03-50-01
        job.json                     the job, why the bundle was made (hang, straggler, dump,
                                     crash), the detection's numbers
        launcher.json                `rankcheck run` only: each rank's exit code or signal
        rank-R/
          fr_trace_rank_R            torch's flight-recorder dump (pickle; `rankcheck fr` reads it)
          stacks.txt                 faulthandler: every thread's Python stack
          stacks.json                the same stacks as data, main thread first
          py-spy.txt                 py-spy's native stacks, when py-spy is installed
          heartbeat.jsonl            this rank's heartbeat history, oldest first
          env.json                   backend, world size, timeouts, the settings that matter
          complete                   written last: this rank's evidence is whole
        verdict.txt, verdict.json    the analysis (`rankcheck fr BUNDLE` writes them again)

Directories are created 0700 and files 0600: stacks and environments can hold secrets.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from typing import Any, Dict, Optional

LIVE = ".live"
REQUEST = "request"
JOB_FILE = "job.json"
LAUNCHER_FILE = "launcher.json"
VERDICT_TEXT = "verdict.txt"
VERDICT_JSON = "verdict.json"
COMPLETE = "complete"
HEARTBEAT_HISTORY = "heartbeat.jsonl"
STACKS_TEXT = "stacks.txt"
STACKS_JSON = "stacks.json"
PY_SPY = "py-spy.txt"
ENV_FILE = "env.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str) -> str:
    return _UNSAFE.sub("_", text).strip("._") or "job"


def job_id(environ: Optional[Dict[str, str]] = None) -> str:
    """The same string on every rank of a job: set by `rankcheck run`, else from the launcher's
    rendezvous (torchrun's run id and the master's address and port)."""
    env = os.environ if environ is None else environ
    if env.get("RANKCHECK_JOB"):
        return safe_name(env["RANKCHECK_JOB"])
    parts = [env.get("TORCHELASTIC_RUN_ID", ""), env.get("MASTER_ADDR", ""), env.get("MASTER_PORT", "")]
    return safe_name("-".join(p for p in parts if p) or "job")


def make_dir(path: str) -> str:
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def probe_writable(path: str) -> None:
    """Make the directory and write a file in it, or raise OSError saying why not.

    The probe has a name of its own: the launcher of every node probes the same shared
    directory at the same moment, and one's clean-up must not remove another's probe.
    """
    make_dir(path)
    with tempfile.NamedTemporaryFile(dir=path, prefix=".rankcheck-write-test-"):
        pass


def write_file(path: str, data: bytes) -> None:
    """Atomically, readable only by the user (a reader never sees half a file)."""
    make_dir(os.path.dirname(path))
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def write_json(path: str, value: Any) -> None:
    write_file(path, (json.dumps(value, indent=1, sort_keys=True) + "\n").encode("utf-8"))


def read_json(path: str) -> Optional[Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def live_dir(dump_dir: str, job: str) -> str:
    return os.path.join(dump_dir, LIVE, job)


def heartbeat_path(dump_dir: str, job: str, rank: int) -> str:
    return os.path.join(live_dir(dump_dir, job), f"rank-{rank}.json")


def rank_dir(bundle: str, rank: int) -> str:
    return os.path.join(bundle, f"rank-{rank}")


def read_heartbeats(dump_dir: str, job: str) -> Dict[int, dict]:
    """rank -> its latest heartbeat, for every rank that has published one."""
    beats: Dict[int, dict] = {}
    folder = live_dir(dump_dir, job)
    try:
        names = os.listdir(folder)
    except OSError:
        return beats
    for name in names:
        match = re.fullmatch(r"rank-(\d+)\.json", name)
        if match:
            beat = read_json(os.path.join(folder, name))
            if isinstance(beat, dict):
                beats[int(match.group(1))] = beat
    return beats


def new_bundle(dump_dir: str, reason: str) -> str:
    """A fresh bundle directory named by the UTC time (and the reason when two collide)."""
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime())
    path = os.path.join(dump_dir, stamp)
    if os.path.exists(path):
        path = f"{path}-{safe_name(reason)}-{os.getpid()}"
    return make_dir(path)


def request_evidence(dump_dir: str, job: str, bundle: str, reason: str) -> None:
    """Ask every armed rank of `job` to write its evidence into `bundle`."""
    write_json(os.path.join(live_dir(dump_dir, job), REQUEST),
               {"bundle": os.path.abspath(bundle), "reason": reason, "time": time.time()})


def read_request(dump_dir: str, job: str) -> Optional[dict]:
    request = read_json(os.path.join(live_dir(dump_dir, job), REQUEST))
    return request if isinstance(request, dict) and "bundle" in request else None


def jobs_in(dump_dir: str) -> Dict[str, float]:
    """job -> the time of its newest heartbeat, for every job that published in `dump_dir`."""
    found: Dict[str, float] = {}
    base = os.path.join(dump_dir, LIVE)
    try:
        names = os.listdir(base)
    except OSError:
        return found
    for job in names:
        times = [b.get("published", 0.0) for b in read_heartbeats(dump_dir, job).values()]
        if times:
            found[job] = max(times)
    return found
