"""Where a process pool starts to pay off: serial vs pool summarizing for growing amounts of source.

    python bench/threshold.py DIR [--runs 3] [--method fork|forkserver|spawn]

Prints, for each amount of source (KB), the median wall time of summarizing it in this process
and in a pool of all cores (started per run, as `collect_summaries` does), and their ratio. The
crossover is what `pool.PARALLEL_MIN_BYTES` (fork) and `PARALLEL_MIN_BYTES_SPAWN` encode.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rankcheck.catalog import load_catalog
from rankcheck.driver import pool
from rankcheck.driver.discover import discover
from rankcheck.driver.summaries import PipelineOptions, collect_summaries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--method", choices=["fork", "forkserver", "spawn"])
    parser.add_argument("--sizes", default="8,16,32,64,128,256,512", help="KB of source, comma-separated")
    args = parser.parse_args()
    if args.method:
        pool.start_method = lambda: args.method  # type: ignore[assignment]
    root = args.directory.resolve()
    files = sorted(discover([root], root), key=lambda s: s.display)
    catalog = load_catalog()
    jobs = pool.default_jobs()
    print(f"{'KB':>6} {'files':>6} {'serial s':>9} {'pool s':>9} {'pool/serial':>12}   ({jobs} workers, {pool.start_method()})")
    for size_kb in (int(x) for x in args.sizes.split(",")):
        chosen, total = [], 0
        for source in files:
            if total >= size_kb * 1024:
                break
            chosen.append(source)
            total += source.path.stat().st_size
        timings = {"serial": [], "pool": []}
        for _ in range(args.runs):
            for name, options in (
                ("serial", PipelineOptions(jobs=1, prefilter=False)),
                ("pool", PipelineOptions(jobs=jobs, prefilter=False, parallel_min_bytes=0)),
            ):
                started = time.perf_counter()
                collect_summaries(chosen, {}, catalog, options)
                timings[name].append(time.perf_counter() - started)
        serial, pooled = statistics.median(timings["serial"]), statistics.median(timings["pool"])
        print(f"{total // 1024:>6} {len(chosen):>6} {serial:>9.3f} {pooled:>9.3f} {pooled / serial:>12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
