"""Spark engine vs the single-process BFS on the same model; appends to bench/results/spark.jsonl.

    python3 bench/bench_spark.py                       # twophase 7 RMs, local[1] and local[2]
    python3 bench/bench_spark.py --rms 8 --masters 'local[2]'
    python3 bench/bench_spark.py --model kafka.init_producer_id --variant kip360-designed --bound clients=3

Each configuration runs in its own process (one SparkContext per process, and so that session
start-up is measured as a user pays it). Reported per run: session start, a warm-up run (Python
workers and JIT), total exploration time, per-level times, and a least-squares fit of
``level seconds = fixed + per_state * new states``: ``fixed`` is the overhead every level pays
(job scheduling, task launch, Python worker hand-over, shuffle files), ``per_state`` the marginal
cost. ``ratio`` = Spark exploration time / single-process BFS time on the same machine.

The machine is shared and has two cores: figures are noisy; compare runs made side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "spark.jsonl"


def build(model: str, bounds: dict[str, int], variant: str | None = None):
    from eoscheck.checker.registry import find_model
    return find_model(model).machine(variant, bounds=bounds)


def _spin(_: int) -> float:
    t0 = time.perf_counter()
    s = 0
    for i in range(10_000_000):
        s += i
    return time.perf_counter() - t0


def usable_cores() -> float:
    """How many cores two CPU-bound processes actually get right now (2.0 on an idle 2-core
    machine, 1.0 when other work takes one): without this, local[1] vs local[2] means nothing."""
    from multiprocessing import Pool
    one = _spin(0)
    with Pool(2) as pool:
        two = pool.map(_spin, range(2))
    return round(2 * one / max(two), 2)


def fit(levels: list[dict]) -> tuple[float, float]:
    """(fixed seconds per level, seconds per new state) by least squares."""
    import numpy as np
    if len(levels) < 2:
        return (levels[0]["seconds"] if levels else 0.0), 0.0
    x = np.array([lv["new"] for lv in levels], dtype=float)
    y = np.array([lv["seconds"] for lv in levels], dtype=float)
    a = np.vstack([np.ones_like(x), x]).T
    (fixed, per_state), *_ = np.linalg.lstsq(a, y, rcond=None)
    return float(fixed), float(per_state)


def child(args: argparse.Namespace) -> dict:
    """One configuration, in this process; prints a JSON line."""
    from eoscheck.checker.explore import ExploreOptions, explore
    machine = build(args.model, dict(args.bound), args.variant)
    if args.engine == "bfs":
        t0 = time.perf_counter()
        r = explore(machine, ExploreOptions(strategy="bfs"))
        return {"engine": "bfs", "seconds": time.perf_counter() - t0, "distinct": r.stats.distinct,
                "generated": r.stats.generated, "depth": r.stats.depth, "verdict": r.verdict}
    from eoscheck.checker.explore.spark_session import start_session
    t0 = time.perf_counter()
    spark = start_session(args.master)
    started = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        explore(build("examples.tcommit", {"rms": 2}), ExploreOptions(strategy="spark"))
        warmup = time.perf_counter() - t0
        t0 = time.perf_counter()
        r = explore(machine, ExploreOptions(strategy="spark"))
        seconds = time.perf_counter() - t0
    finally:
        spark.stop()
    levels = [{"level": lv.level, "new": lv.new, "seconds": round(lv.seconds, 4)} for lv in r.spark_levels]
    fixed, per_state = fit(levels)
    return {"engine": "spark", "master": args.master, "partitions": r.spark_partitions,
            "session_start": started, "warmup_run": warmup, "seconds": seconds,
            "distinct": r.stats.distinct, "generated": r.stats.generated, "depth": r.stats.depth,
            "verdict": r.verdict, "levels": levels, "fixed_per_level": fixed,
            "per_million_states": per_state * 1e6,
            "fixed_share": fixed * len(levels) / seconds if seconds else 0.0}


def run_child(args: argparse.Namespace, engine: str, master: str | None = None) -> dict:
    cmd = [sys.executable, __file__, "--child", "--engine", engine, "--model", args.model]
    if args.variant:
        cmd += ["--variant", args.variant]
    for k, v in args.bound:
        cmd += ["--bound", f"{k}={v}"]
    if master:
        cmd += ["--master", master]
    env = dict(os.environ)
    if args.partitions:
        env["EOSCHECK_SPARK_PARTITIONS"] = str(args.partitions)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{engine} {master or ''} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bound(text: str) -> tuple[str, int]:
    key, _, value = text.partition("=")
    return key, int(value)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="examples.twophase")
    p.add_argument("--variant", help="the model's variant (default: its default variant)")
    p.add_argument("--bound", type=bound, action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--rms", type=int, help="shorthand for --bound rms=N")
    p.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"])
    p.add_argument("--partitions", type=int, help="EOSCHECK_SPARK_PARTITIONS for the Spark runs")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--no-record", action="store_true", help="print only; do not append to results")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--engine", default="spark", help=argparse.SUPPRESS)
    p.add_argument("--master", default="local[2]", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.rms is not None:
        args.bound.append(("rms", args.rms))
    elif args.model == "examples.twophase" and not args.bound:
        args.bound.append(("rms", 7))
    if args.child:
        print(json.dumps(child(args)))
        return

    load = os.getloadavg()[0]
    cores = usable_cores()
    print(f"load average {load:.1f}; two CPU-bound processes get {cores} cores")
    for _ in range(args.repeat):
        bfs = run_child(args, "bfs")
        print(f"bfs: {bfs['distinct']:,} states, {bfs['generated']:,} generated, depth {bfs['depth']}, "
              f"{bfs['seconds']:.1f} s")
        for master in args.masters:
            r = run_child(args, "spark", master)
            same = (r["distinct"], r["generated"], r["depth"]) == (bfs["distinct"], bfs["generated"], bfs["depth"])
            ratio = r["seconds"] / bfs["seconds"]
            print(f"spark {master} ({r['partitions']} partitions): {r['seconds']:.1f} s = {ratio:.2f}x bfs, "
                  f"{len(r['levels'])} levels, fixed {r['fixed_per_level']:.3f} s/level "
                  f"({100 * r['fixed_share']:.0f}% of the run), {r['per_million_states']:.1f} s per "
                  f"million new states; session start {r['session_start']:.1f} s, warm-up "
                  f"{r['warmup_run']:.1f} s; same counts as bfs: {same}")
            record = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                      "model": args.model, "variant": args.variant, "bounds": dict(args.bound), "host_cpus": os.cpu_count(),
                      "load_avg_1m": round(load, 2), "usable_cores": cores, "python": platform.python_version(),
                      "bfs_seconds": bfs["seconds"], "ratio_vs_bfs": ratio, "same_counts": same, **r}
            if not args.no_record:
                RESULTS.parent.mkdir(parents=True, exist_ok=True)
                with RESULTS.open("a") as f:
                    f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
