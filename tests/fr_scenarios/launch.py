"""Run scenario scripts on real gloo ranks and collect what they left: dumps, logs, exit codes.

`run_scenarios` starts all given scenarios at once through `spawn_ranks.py` (ranks forked from
one torch-loaded parent, so torch is imported once, not once per rank).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass
class ScenarioRun:
    script: str
    world: int
    out: str
    returncodes: List[Optional[int]]
    logs: Dict[int, str]

    def dir(self, name: str) -> str:
        return os.path.join(self.out, name)

    def describe(self) -> str:
        parts = [f"{self.script} x{self.world}: return codes {self.returncodes}"]
        for rank, log in sorted(self.logs.items()):
            parts.append(f"--- rank {rank} ---\n{log[-3000:]}")
        return "\n".join(parts)


def expected_line(script: str, marker: str) -> int:
    """The line of `script` carrying the comment `# fr: <marker>`."""
    with open(os.path.join(HERE, script), encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if text.rstrip().endswith(f"# fr: {marker}"):
                return number
    raise LookupError(f"no '# fr: {marker}' line in {script}")


@dataclass(frozen=True)
class Job:
    script: str
    world: int
    mode: str = "on-demand"
    gloo_timeout_s: Optional[float] = None

    @property
    def name(self) -> str:
        return f"{self.script[:-3]}-{self.world}-{self.mode}"


def _read_logs(out: str, world: int) -> Dict[int, str]:
    logs = {}
    for rank in range(world):
        path = os.path.join(out, "logs", f"rank{rank}.log")
        if os.path.exists(path):
            with open(path, encoding="utf-8", errors="replace") as handle:
                logs[rank] = handle.read()
    return logs


def run_scenarios(jobs: Sequence[Job], base: str, deadline_s: float = 120.0) -> Dict[str, ScenarioRun]:
    spec = [
        {"script": j.script, "world": j.world, "out": os.path.join(base, j.name), "mode": j.mode,
         "gloo_timeout_s": j.gloo_timeout_s}
        for j in jobs
    ]
    jobs_path = os.path.join(base, "jobs.json")
    with open(jobs_path, "w", encoding="utf-8") as handle:
        json.dump(spec, handle)
    env = dict(os.environ, FR_SCENARIO_DEADLINE_S=str(deadline_s), OMP_NUM_THREADS="1",
               PYTHONUNBUFFERED="1")
    subprocess.run(
        [sys.executable, os.path.join(HERE, "spawn_ranks.py"), jobs_path],
        env=env, check=True, timeout=deadline_s + 60, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    with open(jobs_path + ".result", encoding="utf-8") as handle:
        codes = json.load(handle)
    return {
        job.name: ScenarioRun(job.script, job.world, item["out"], code, _read_logs(item["out"], job.world))
        for job, item, code in zip(jobs, spec, codes)
    }
