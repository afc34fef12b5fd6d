"""Re-record the RECORDED dumps under `recorded-torch2.13/` with the torch installed here.

    python tests/data/fr/record.py

Runs a few scenarios of `tests/fr_scenarios/` on real gloo ranks (as the tests do) and copies
the dumps the ranks wrote, unchanged, into `recorded-torch2.13/<scenario>-<world>-<mode>/`.
Their frames hold the absolute paths of the machine that recorded them, as real dumps do.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "fr_scenarios"))

from launch import Job, run_scenarios

JOBS = [
    Job("extra_allreduce.py", 2),
    Job("shape_mismatch.py", 4),
    Job("crash_before_dump.py", 4),
    Job("host_stall.py", 2),
    Job("sleep_before_barrier.py", 2, mode="on-timeout", gloo_timeout_s=2.0),
]


def main() -> None:
    target = os.path.join(HERE, "recorded-torch2.13")
    with tempfile.TemporaryDirectory() as base:
        runs = run_scenarios(JOBS, base)
        shutil.rmtree(target, ignore_errors=True)
        for job in JOBS:
            run = runs[job.name]
            for kind in ("pickle", "json", "timeout"):
                source = run.dir(kind)
                if os.path.isdir(source) and os.listdir(source):
                    shutil.copytree(source, os.path.join(target, job.name, kind))


if __name__ == "__main__":
    main()
