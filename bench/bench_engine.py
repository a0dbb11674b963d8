"""Engine benchmark: BFS on TLA+'s TwoPhase at fixed sizes, one fresh process per size.

Prints distinct states/s, generated states/s and peak RSS bytes per distinct state, and appends
one JSON line per size to bench/results/engine.jsonl. Peak RSS comes from
``resource.getrusage(RUSAGE_SELF).ru_maxrss`` in a fresh subprocess (so sizes do not share a heap);
``rss_per_state`` divides the whole peak, ``net_rss_per_state`` first subtracts the peak measured
after imports and model construction (the interpreter, numpy, rich: tens of MB that do not grow
with the model).

    python bench/bench_engine.py                 # TwoPhase with 5, 7 and 8 resource managers
    python bench/bench_engine.py --sizes 5 7 --strategy bfs --repeat 3

Figures are only comparable on the same machine and load. Rates are per wall-clock second;
``distinct/cpu-s`` divides by the process's CPU time instead, which other jobs disturb less.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "engine.jsonl"

CHILD = r"""
import json, resource, sys, time
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.registry import find_model

size, strategy = int(sys.argv[1]), sys.argv[2]
machine = find_model("examples.twophase").machine(bounds={"rms": size})
base_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start, cpu_start = time.perf_counter(), time.process_time()
result = explore(machine, ExploreOptions(strategy=strategy))
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"verdict": result.verdict, "distinct": result.stats.distinct,
                  "generated": result.stats.generated, "depth": result.stats.depth,
                  "elapsed": elapsed, "cpu": cpu, "base_rss": base_kb * 1024, "peak_rss": peak_kb * 1024}))
"""


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run_once(size: int, strategy: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(size), strategy], capture_output=True,
                          text=True, check=True)
    return json.loads(proc.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 7, 8],
                        help="numbers of resource managers (default: 5 7 8)")
    parser.add_argument("--strategy", default="bfs", help="bfs (default), dfs, parallel, ...")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size; the median is kept")
    parser.add_argument("--no-save", action="store_true", help="do not append to the results file")
    args = parser.parse_args(argv)

    print(f"{'model':<22}{'distinct':>11}{'generated':>12}{'time s':>8}{'distinct/s':>12}"
          f"{'generated/s':>13}{'B/state':>9}{'net B/state':>12}{'distinct/cpu-s':>15}")
    for size in args.sizes:
        runs = sorted((run_once(size, args.strategy) for _ in range(args.repeat)),
                      key=lambda r: r["elapsed"])
        r = runs[len(runs) // 2]
        row = {
            "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "commit": git_commit(), "python": platform.python_version(), "host": platform.node(),
            "model": "examples.twophase", "bounds": {"rms": size}, "strategy": args.strategy,
            "repeat": args.repeat, **r,
            "distinct_per_s": r["distinct"] / r["elapsed"],
            "generated_per_s": r["generated"] / r["elapsed"],
            # CPU-time rates: less disturbed when other jobs share the machine
            "distinct_per_cpu_s": r["distinct"] / r["cpu"],
            "generated_per_cpu_s": r["generated"] / r["cpu"],
            "rss_per_state": r["peak_rss"] / r["distinct"],
            "net_rss_per_state": (r["peak_rss"] - r["base_rss"]) / r["distinct"],
        }
        print(f"{'twophase rms=' + str(size):<22}{r['distinct']:>11,}{r['generated']:>12,}"
              f"{r['elapsed']:>8.2f}{row['distinct_per_s']:>12,.0f}{row['generated_per_s']:>13,.0f}"
              f"{row['rss_per_state']:>9,.0f}{row['net_rss_per_state']:>12,.0f}"
              f"{row['distinct_per_cpu_s']:>15,.0f}")
        if not args.no_save:
            RESULTS.parent.mkdir(parents=True, exist_ok=True)
            with RESULTS.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
