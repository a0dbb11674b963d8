"""The Spark engine on a standalone cluster on this machine (master + N workers of 1 core, from
the installed PySpark's spark-class, all on 127.0.0.1) against the single-process BFS, on specs;
appends to bench/results/spark-cluster.jsonl.

    python3 bench/bench_spark_cluster.py                                   # the two ~500k Kafka specs
    python3 bench/bench_spark_cluster.py --before /usr/bin/python3         # also an older checkout's engine
    python3 bench/bench_spark_cluster.py --spec specs/kip360-leader-failover.toml --repeat 3

Runs are interleaved (BFS, Spark, [Spark with --before's interpreter], BFS, ...) so that the
ratios compare runs made under the same load: this 2-core machine is shared. Each run is its own
process; the Spark driver's session start is measured apart from the exploration. ``--before``
names a Python whose ``eoscheck`` is another checkout (e.g. the main branch's), to measure a change
before and after in one session.
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
spec_path, engine, master = sys.argv[1], sys.argv[2], sys.argv[3]
spec = load_spec(spec_path)
machine = build_machine(spec)
options = spec_to_options(spec)
out = {}
if engine == "bfs":
    t0 = time.perf_counter()
    r = explore(machine, replace(options, strategy="bfs"))
    out["seconds"] = time.perf_counter() - t0
else:
    from eoscheck.checker.explore.spark_session import start_session
    t0 = time.perf_counter()
    spark = start_session(master, conf={"spark.driver.host": "127.0.0.1",
                                        "spark.driver.bindAddress": "127.0.0.1"})
    out["session_start"] = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        r = explore(machine, replace(options, strategy="spark", spark_master=master))
        out["seconds"] = time.perf_counter() - t0
        out["levels"] = [{"level": lv.level, "new": lv.new, "seconds": round(lv.seconds, 4)}
                         for lv in r.spark_levels]
        out["partitions"] = r.spark_partitions
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


def run(python: str, spec: Path, engine: str, master: str, timeout: float) -> dict:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": python,
           "PYSPARK_DRIVER_PYTHON": python}
    proc = subprocess.run([python, "-c", CHILD, str(spec), engine, master], capture_output=True, check=False,
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
                      f"{bfs['seconds']:.1f} s (load {load:.1f})", flush=True)
                for label, python in engines:
                    r = run(python, spec, "spark", cluster.master, args.timeout)
                    same = (r["distinct"], r["generated"], r["depth"]) == (bfs["distinct"], bfs["generated"], bfs["depth"])
                    fixed, per_state = fit(r["levels"])
                    ratio = r["seconds"] / bfs["seconds"]
                    print(f"  spark {label} ({args.workers} workers x 1 core, {r['partitions']} partitions): "
                          f"{r['seconds']:.1f} s = {ratio:.2f}x bfs; session start {r['session_start']:.1f} s; "
                          f"fixed {fixed:.3f} s/level over {len(r['levels'])} levels, "
                          f"{per_state * 1e6:.1f} s per million new states; same counts: {same}", flush=True)
                    if not args.no_record:
                        record = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                  "spec": spec.stem, "code": label, "workers": args.workers,
                                  "load_avg_1m": round(load, 2), "bfs_seconds": bfs["seconds"],
                                  "ratio_vs_bfs": ratio, "same_counts": same,
                                  "fixed_per_level": fixed, "per_million_states": per_state * 1e6, **r}
                        RESULTS.parent.mkdir(parents=True, exist_ok=True)
                        with RESULTS.open("a") as f:
                            f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
