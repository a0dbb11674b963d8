"""Composition overhead: machines declared with ``checker.compose`` against the same protocols
written by hand, explored by the BFS, each run in a fresh process.

    python bench/bench_compose.py               # the default plan, medians of 3 (about 5 minutes)
    python bench/bench_compose.py --repeat 1 --quick

Pairs (same state graph: the tests hold them to equal distinct/generated counts):

- ``twophase``: TLA+'s TwoPhase with 7 RMs (296,448 states). The hand-written machine is a few
  tuple slices per step, so this is the worst case for a declared machine: the rules do almost
  nothing and the mechanism's lookups are all there is.
- ``abp``: the alternating-bit protocol over an unordered, lossy, duplicating network (4 records,
  2 losses, 2 copies, channels of at most 4; 140,460 states). The hand-written machine recomputes
  each channel operation; the declared one memoises them.

Each composed machine also runs with ``memoize=False`` (what the memo is worth), and once under
``cProfile`` to split its time into the engine (``checker/`` but not ``compose``), the mechanism
(``checker/compose`` and its generated code), the model's own code (rule bodies, guards,
properties) and C builtins (dict lookups, tuple building, hashing, called by the other three).
Records go to ``bench/results/compose.jsonl`` and a table to ``bench/results/compose.md``.
Wall-clock figures depend on the machine's load: each record carries the load average.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"

MACHINES = {
    "twophase": {
        "hand": "from eoscheck.examples.twophase import TwoPhase as M; machine = M({n})",
        "composed": "from eoscheck.examples.twophase_composed import ComposedTwoPhase as M; machine = M({n}{memo})",
    },
    "abp": {
        "hand": ("from eoscheck.examples.abp import HandAbp as M, Delivery; "
                 "machine = M({n}, Delivery.UNORDERED, 2, 2, 4)"),
        "composed": ("from eoscheck.examples.abp import ComposedAbp as M, Delivery; "
                     "machine = M({n}, Delivery.UNORDERED, 2, 2, 4{memo})"),
    },
}
SIZES = {"twophase": 7, "abp": 4}
QUICK = {"twophase": 5, "abp": 3}

CHILD = r"""
import json, os, resource, sys, time
from eoscheck.checker.explore import ExploreOptions, explore
{build}
base_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
profile = sys.argv[1] == "profile"
start, cpu_start = time.perf_counter(), time.process_time()
options = ExploreOptions(stop_at_first=False)
if profile:
    import cProfile
    prof = cProfile.Profile()
    result = prof.runcall(explore, machine, options)
    split = {{"engine": 0.0, "compose": 0.0, "model": 0.0, "builtins": 0.0}}
    # per code object (``getstats``), not per (file, line, name) as pstats keys them: the generated
    # functions share their names (every outcome builder is "<compose successor>":1 build), and
    # pstats would keep one of each
    for entry in prof.getstats():
        filename, tottime = ("~" if isinstance(entry.code, str) else entry.code.co_filename), entry.inlinetime
        if filename == "~":
            split["builtins"] += tottime
        elif "/checker/compose/" in filename or filename.startswith("<compose"):
            split["compose"] += tottime
        elif "/examples/" in filename or "/model/" in filename:
            split["model"] += tottime
        else:
            split["engine"] += tottime
else:
    split = None
    result = explore(machine, options)
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"verdict": result.verdict, "distinct": result.stats.distinct,
                  "generated": result.stats.generated, "depth": result.stats.depth, "elapsed": elapsed,
                  "cpu": cpu, "net_rss_per_state": (peak_kb - base_kb) * 1024 / max(result.stats.distinct, 1),
                  "split": split}}))
"""


def run_child(build: str, mode: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", CHILD.format(build=build), mode], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test; not recorded)")
    parser.add_argument("--models", nargs="*", default=list(MACHINES))
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else SIZES
    records = []
    for model in args.models:
        n = sizes[model]
        variants = {"hand": MACHINES[model]["hand"].format(n=n),
                    "composed": MACHINES[model]["composed"].format(n=n, memo=""),
                    "composed, memoize=False": MACHINES[model]["composed"].format(n=n, memo=", memoize=False")}
        # hand-written and composed runs alternate (hand, composed, hand, ...), so that a change of
        # the machine's load in the meantime falls on both alike; memoize=False runs once, after
        all_runs: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
        for i in range(args.repeat):
            for name, build in variants.items():
                if name != "composed, memoize=False" or i == 0:
                    all_runs[name].append({**run_child(build, "time"), "load": os.getloadavg()[0]})
        for name, build in variants.items():
            runs = all_runs[name]
            best = sorted(runs, key=lambda r: r["elapsed"])[len(runs) // 2]  # the median run
            cpus = sorted(r["cpu"] for r in runs)
            record = {"when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "commit": git_commit(),
                      "python": platform.python_version(), "model": model, "size": n, "machine": name,
                      "repeat": len(runs), **best, "elapsed_all": [r["elapsed"] for r in runs],
                      "cpu_all": [r["cpu"] for r in runs], "cpu_median": cpus[len(cpus) // 2],
                      "distinct_per_s": best["distinct"] / best["elapsed"]}
            if name == "composed":
                record["split"] = run_child(build, "profile")["split"]
            records.append(record)
            print(f"{model:9} {name:24} {record['distinct']:>9,} states {record['elapsed']:7.2f} s "
                  f"{record['distinct_per_s']:>9,.0f}/s (load {best['load']:.1f})", flush=True)
    if args.quick:
        return 0
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "compose.jsonl", "a") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)
    # the table shows the latest record of each (model, machine), so one model can be re-run alone
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    with open(RESULTS / "compose.jsonl") as f:
        for line in f:
            r = json.loads(line)
            latest[(r["model"], r["machine"])] = r
    (RESULTS / "compose.md").write_text(table(list(latest.values())))
    print(table(list(latest.values())))
    return 0


def table(records: list[dict[str, Any]]) -> str:
    lines = ["# Composition overhead (bench/bench_compose.py)", "",
             "BFS, one process, the latest run of each row; median of 3 runs (memoize=False: one run). The",
             "time ratio compares with the hand-written machine's row of the same model; both ran in one",
             "invocation unless their commits differ. CPU s: the median of the runs' CPU seconds (the",
             "steadier figure on a shared machine; rows before 05:00 UTC on 2026-11-28 give the CPU time of",
             "the median wall-clock run); runs since then alternate hand-written and composed.", "",
             ("| model | machine | distinct | generated | s | distinct/s | vs hand | CPU s | CPU vs hand | bytes/state "
              "| load | commit, UTC |"),
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    hand = {r["model"]: r for r in records if r["machine"] == "hand"}
    for r in records:
        h = hand.get(r["model"])
        cpu = r.get("cpu_median", r["cpu"])
        ratio = r["elapsed"] / h["elapsed"] if h else float("nan")
        cpu_ratio = cpu / h.get("cpu_median", h["cpu"]) if h else float("nan")
        lines.append(f"| {r['model']} ({r['size']}) | {r['machine']} | {r['distinct']:,} | {r['generated']:,} | "
                     f"{r['elapsed']:.2f} | {r['distinct_per_s']:,.0f} | {ratio:.2f}x | {cpu:.2f} | {cpu_ratio:.2f}x | "
                     f"{r['net_rss_per_state']:.0f} | {r['load']:.1f} | {r['commit']}, {r['when'][11:16]} |")
    lines += ["", "Profile of the composed runs (cProfile, own time; the profiler inflates small calls):", "",
              "| model | engine | compose mechanism | model code | C builtins |", "|---|---:|---:|---:|---:|"]
    for r in records:
        if r.get("split"):
            total = sum(r["split"].values())
            p = {k: 100 * v / total for k, v in r["split"].items()}
            lines.append(f"| {r['model']} | {p['engine']:.0f}% | {p['compose']:.0f}% | {p['model']:.0f}% | "
                         f"{p['builtins']:.0f}% |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
