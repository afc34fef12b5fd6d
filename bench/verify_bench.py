"""Time to a verdict: `rankcheck verify` against torchrun-style execution with a 10 s gloo timeout.

For every hazard of corpus/runnable (`rc1NN_<topic>.py`) and its fixed twin (`safe_<topic>.py`):
  hang      the verifier on the hazard: seconds from launch to its divergence verdict
  twin      the verifier on the fixed twin: seconds from launch to "no divergence"
  torchrun  the same two ranks spawned plainly (no instrumentation), init_process_group with
            timeout=10 s, on the hazard: seconds until every rank has exited (error or not)
  plain     the same plain run of the twin (what the instrumentation costs on a clean run)
and the start-up floor: two ranks that only `import torch` (launched the same way), which any
run pays before its first collective.

Targets (issue 5): hang <= 1.5 x twin, and torchrun >= 2 x hang.

    python bench/verify_bench.py [--repeat N] [--json out.json] [--only TOPIC]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rankcheck.verify.api import run_plain, run_script  # noqa: E402  (after the path insert)

RUNNABLE = REPO / "corpus" / "runnable"
GLOO_TIMEOUT = 10.0
WALL_LIMIT = 60.0


def pairs(only: str = "") -> list[tuple[str, Path, Path]]:
    out = []
    for hazard in sorted(RUNNABLE.glob("rc1*_*.py")):
        topic = hazard.stem.split("_", 1)[1]
        twin = RUNNABLE / f"safe_{topic}.py"
        if twin.exists() and only in topic:
            out.append((topic, hazard, twin))
    return out


def startup_floor(repeat: int) -> float:
    """Two ranks that import torch and exit, launched exactly like the others."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "import_only.py"
        script.write_text("import torch\nimport torch.distributed\n", encoding="utf-8")
        times = [run_plain(str(script), timeout=WALL_LIMIT).elapsed for _ in range(repeat)]
    return statistics.median(times)


def measure(topic: str, hazard: Path, twin: Path, repeat: int) -> dict:
    hang, twin_t, plain_hang, plain_twin = [], [], [], []
    outcomes = {}
    for _ in range(repeat):
        result = run_script(str(hazard), timeout=WALL_LIMIT, announce=None)
        hang.append(result.elapsed)
        outcomes["hang"] = result.outcome
        result = run_script(str(twin), timeout=WALL_LIMIT, announce=None)
        twin_t.append(result.elapsed)
        outcomes["twin"] = result.outcome
        result = run_plain(str(hazard), timeout=WALL_LIMIT, pg_timeout=GLOO_TIMEOUT)
        plain_hang.append(result.elapsed)
        outcomes["torchrun"] = "timed out" if result.timed_out else _plain_ending(result)
        result = run_plain(str(twin), timeout=WALL_LIMIT, pg_timeout=GLOO_TIMEOUT)
        plain_twin.append(result.elapsed)
    row = {
        "topic": topic,
        "hang": statistics.median(hang),
        "twin": statistics.median(twin_t),
        "torchrun": statistics.median(plain_hang),
        "plain_twin": statistics.median(plain_twin),
        "outcomes": outcomes,
    }
    row["hang_over_twin"] = row["hang"] / row["twin"]
    row["torchrun_over_hang"] = row["torchrun"] / row["hang"]
    return row


def _plain_ending(result) -> str:
    codes = [r.exit_code for r in result.ranks]
    return "all exited 0" if all(c == 0 for c in codes) else f"exit codes {codes}"


def geomean(values: list[float]) -> float:
    return statistics.geometric_mean(values) if values else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement (median)")
    parser.add_argument("--json", default="", help="also write the JSON here")
    parser.add_argument("--only", default="", help="topics containing this text")
    args = parser.parse_args(argv)

    floor = startup_floor(max(3, args.repeat))
    rows = [measure(topic, h, t, args.repeat) for topic, h, t in pairs(args.only)]
    if not rows:
        print("no hazard/twin pairs found", file=sys.stderr)
        return 2

    header = f"{'topic':38} {'hang':>6} {'twin':>6} {'h/t':>5} {'torchrun':>8} {'tr/h':>5} {'plain':>6}  torchrun outcome"
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row['topic'][:38]:38} {row['hang']:6.2f} {row['twin']:6.2f} "
            f"{row['hang_over_twin']:5.2f} {row['torchrun']:8.2f} {row['torchrun_over_hang']:5.2f} "
            f"{row['plain_twin']:6.2f}  {row['outcomes']['torchrun']}"
        )
    hang_twin = [r["hang_over_twin"] for r in rows]
    tr_hang = [r["torchrun_over_hang"] for r in rows]
    total_hang = sum(r["hang"] for r in rows)
    summary = {
        "pairs": len(rows),
        "repeat": args.repeat,
        "cpus": os.cpu_count(),
        "gloo_timeout_s": GLOO_TIMEOUT,
        "startup_floor_s": floor,
        "startup_share_of_hang_verdict": floor * len(rows) / total_hang,
        "hang_over_twin": {
            "median": statistics.median(hang_twin),
            "geomean": geomean(hang_twin),
            "max": max(hang_twin),
            "within_1_5x": sum(1 for v in hang_twin if v <= 1.5),
        },
        "torchrun_over_hang": {
            "median": statistics.median(tr_hang),
            "geomean": geomean(tr_hang),
            "min": min(tr_hang),
            "at_least_2x": sum(1 for v in tr_hang if v >= 2.0),
        },
        "instrumented_twin_over_plain_twin": geomean([r["twin"] / r["plain_twin"] for r in rows]),
        "rows": rows,
    }
    print()
    print(
        f"start-up floor (2 ranks, import torch): {floor:.2f} s = "
        f"{summary['startup_share_of_hang_verdict']:.0%} of the average hang verdict time"
    )
    ht, th = summary["hang_over_twin"], summary["torchrun_over_hang"]
    print(
        f"hang verdict / fixed twin:  median {ht['median']:.2f}x, geomean {ht['geomean']:.2f}x, "
        f"max {ht['max']:.2f}x; {ht['within_1_5x']}/{len(rows)} within 1.5x"
    )
    print(
        f"torchrun(10 s) / hang verdict: median {th['median']:.2f}x, geomean {th['geomean']:.2f}x, "
        f"min {th['min']:.2f}x; {th['at_least_2x']}/{len(rows)} at least 2x"
    )
    print(
        "instrumented twin / plain twin: "
        f"{summary['instrumented_twin_over_plain_twin']:.2f}x (geomean)"
    )
    text = json.dumps(summary, indent=2)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    print()
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
