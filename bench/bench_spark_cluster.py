"""The Spark engine on a standalone cluster on this machine (master + N workers of 1 core, from
the installed PySpark's spark-class, all on 127.0.0.1) against the single-process BFS, on specs;
appends to bench/results/spark-cluster.jsonl.

    python3 bench/bench_spark_cluster.py                                   # the two ~500k Kafka specs
    python3 bench/bench_spark_cluster.py --before /usr/bin/python3         # also an older checkout's engine
    python3 bench/bench_spark_cluster.py --spec specs/kip360-leader-failover.toml --repeat 3
    python3 bench/bench_spark_cluster.py --driver-states 0                 # every level as a Spark job

Runs are interleaved (BFS, Spark, [Spark with --before's interpreter], BFS, ...) so that the
ratios compare runs made under the same load: this 2-core machine is shared. Each run is its own
process; the Spark driver's session start is measured apart from the exploration. ``--before``
names a Python whose ``eoscheck`` is another checkout (e.g. the main branch's), to measure a change
before and after in one session.

Per Spark run it prints: the exploration time and its ratio to the BFS's (the target is 3x); the
driver's session start (JVM, SparkContext, registration with the master) and, apart, the time
until the workers' executors have registered (the exploration starts after both); how many of the
first levels ran on the driver (``driver_states``) and their time; the first Spark level's time
(it starts the executors' Python workers unless the warm-up during the driver's levels did); and
a least-squares fit of the other Spark levels' times: fixed seconds per level plus seconds per
million new states. The driver's CPU seconds are given next to the wall-clock figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "spark-cluster.jsonl"
SPECS = [ROOT / "specs" / "large" / "kip360-leader-failover-large.toml",
         ROOT / "specs" / "large" / "kip854-expiry-at-least-delivery-timeout-large.toml"]

CHILD = r'''
import json, sys, time
from dataclasses import replace
from eoscheck.checker.spec import build_machine, load_spec, spec_to_options
from eoscheck.checker.explore import explore
spec_path, engine, master, workers = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
spec = load_spec(spec_path)
machine = build_machine(spec)
options = spec_to_options(spec)
out = {}
if engine == "bfs":
    t0, c0 = time.perf_counter(), time.process_time()
    r = explore(machine, replace(options, strategy="bfs"))
    out["seconds"] = time.perf_counter() - t0
    out["cpu_seconds"] = time.process_time() - c0
else:
    from eoscheck.checker.explore.spark_session import start_session
    t0 = time.perf_counter()
    spark = start_session(master, conf={"spark.driver.host": "127.0.0.1",
                                        "spark.driver.bindAddress": "127.0.0.1"})
    out["session_start"] = time.perf_counter() - t0
    try:
        sc = spark.sparkContext
        t0 = time.perf_counter()
        while sc._jsc.sc().getExecutorMemoryStatus().size() - 1 < workers and time.perf_counter() - t0 < 120:
            time.sleep(0.05)
        out["executors_up"] = time.perf_counter() - t0
        t0, c0 = time.perf_counter(), time.process_time()
        r = explore(machine, replace(options, strategy="spark", spark_master=master))
        out["seconds"] = time.perf_counter() - t0
        out["cpu_seconds"] = time.process_time() - c0
        out["levels"] = [{"level": lv.level, "new": lv.new, "seconds": round(lv.seconds, 4),
                          "on_driver": getattr(lv, "on_driver", False)} for lv in r.spark_levels]
        out["partitions"] = r.spark_partitions
        out["warmed_at"] = getattr(r, "spark_warmed_at", None)
    finally:
        spark.stop()
out.update(distinct=r.stats.distinct, generated=r.stats.generated, depth=r.stats.depth,
           verdict=r.verdict)
print(json.dumps(out))
'''


def fit(levels: list[dict]) -> tuple[float, float]:
    """(fixed seconds per level, seconds per new state) by least squares."""
    import numpy as np
    if len(levels) < 2:
        return 0.0, 0.0
    x = np.array([lv["new"] for lv in levels], dtype=float)
    y = np.array([lv["seconds"] for lv in levels], dtype=float)
    a = np.vstack([np.ones_like(x), x]).T
    (fixed, per_state), *_ = np.linalg.lstsq(a, y, rcond=None)
    return float(fixed), float(per_state)


def run(python: str, spec: Path, engine: str, master: str, timeout: float, workers: int = 0,
        driver_states: int | None = None) -> dict:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": python,
           "PYSPARK_DRIVER_PYTHON": python}
    if driver_states is not None:
        env["EOSCHECK_SPARK_DRIVER_STATES"] = str(driver_states)
    proc = subprocess.run([python, "-c", CHILD, str(spec), engine, master, str(workers)],
                          capture_output=True, check=False,
                          text=True, env=env, timeout=timeout, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"{engine} with {python} on {spec.name} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spec", type=Path, action="append", help="spec files (default: the ~500k Kafka specs)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--before", metavar="PYTHON", help="also run the Spark engine of this interpreter's eoscheck")
    p.add_argument("--timeout", type=float, default=3600)
    p.add_argument("--no-record", action="store_true")
    p.add_argument("--driver-states", type=int, metavar="N",
                   help="levels below N states on the driver (default: the engine's, 5000; 0: none)")
    args = p.parse_args()
    sys.path.insert(0, str(ROOT))
    from eoscheck.checker.explore.spark_cluster import LocalCluster

    specs = args.spec or SPECS
    engines = [("after", sys.executable)] + ([("before", args.before)] if args.before else [])
    with LocalCluster(workers=args.workers) as cluster:
        for _ in range(args.repeat):
            for spec in specs:
                load = os.getloadavg()[0]
                bfs = run(sys.executable, spec, "bfs", "", args.timeout)
                print(f"{spec.stem}: bfs {bfs['distinct']:,} states, depth {bfs['depth']}, "
                      f"{bfs['seconds']:.1f} s, CPU {bfs['cpu_seconds']:.1f} s "
                      f"({bfs['distinct'] / max(bfs['cpu_seconds'], 1e-9):,.0f} states per CPU-second; "
                      f"load {load:.1f})", flush=True)
                for label, python in engines:
                    r = run(python, spec, "spark", cluster.master, args.timeout, args.workers,
                            args.driver_states)
                    record = summarize(r, bfs)
                    print(f"  spark {label} ({args.workers} workers x 1 core, {r['partitions']} partitions): "
                          f"{r['seconds']:.1f} s = {record['ratio_vs_bfs']:.2f}x bfs "
                          f"(driver CPU {r.get('cpu_seconds', 0):.1f} s); "
                          f"session start {r['session_start']:.1f} s + executors up "
                          f"{r.get('executors_up', 0):.1f} s; {record['driver_levels']} levels on the driver "
                          f"({record['driver_seconds']:.2f} s; warm-up done {r.get('warmed_at') or 0:.2f} s into the run), "
                          f"first Spark level {record['first_spark_level']:.2f} s, "
                          f"then fixed {record['fixed_per_level']:.3f} s/level over {record['fitted_levels']} levels "
                          f"+ {record['per_million_states']:.1f} s per million new states; "
                          f"same counts: {record['same_counts']}; load {os.getloadavg()[0]:.1f}", flush=True)
                    if not args.no_record:
                        record = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                  "spec": spec.stem, "code": label, "workers": args.workers,
                                  "load_avg_1m": round(load, 2), "bfs_seconds": bfs["seconds"],
                                  "bfs_cpu_seconds": bfs.get("cpu_seconds"), **record, **r}
                        RESULTS.parent.mkdir(parents=True, exist_ok=True)
                        with RESULTS.open("a") as f:
                            f.write(json.dumps(record) + "\n")


def summarize(r: dict, bfs: dict) -> dict:
    """The figures of one Spark run against its BFS run."""
    levels = r["levels"]
    driver = [lv for lv in levels if lv.get("on_driver")]
    spark = [lv for lv in levels if not lv.get("on_driver")]
    fixed, per_state = fit(spark[1:])
    return {"ratio_vs_bfs": r["seconds"] / bfs["seconds"],
            "same_counts": (r["distinct"], r["generated"], r["depth"]) ==
                           (bfs["distinct"], bfs["generated"], bfs["depth"]),
            "driver_levels": len(driver), "driver_seconds": sum(lv["seconds"] for lv in driver),
            "first_spark_level": spark[0]["seconds"] if spark else 0.0,
            "fitted_levels": len(spark[1:]),
            "fixed_per_level": fixed, "per_million_states": per_state * 1e6}


if __name__ == "__main__":
    main()
