"""A state space larger than one process may hold: the single-process BFS under an address-space
limit fails, the Spark engine on a local standalone cluster whose Python workers hold the same
limit completes with the right counts. Appends to bench/results/spark-memory.jsonl.

    python3 bench/bench_spark_memory.py --limit-mb 400 --spec specs/large/idempotence-benchmark.toml

The limit is RLIMIT_AS (``resource.setrlimit`` in the BFS's subprocess; Spark's
``spark.executor.pyspark.memory`` for each executor's Python worker, which PySpark applies the same
way). Each executor's JVM keeps its partitions' cached level data (and spills to disk beyond
``--worker-memory``). Also prints the projected cost per billion states from the Spark run's
per-level costs (least squares: fixed seconds per level + seconds per new state).
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
RESULTS = HERE / "results" / "spark-memory.jsonl"

BFS = r'''
import json, resource, sys, time
limit = int(sys.argv[2]) << 20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from eoscheck.checker.spec import build_machine, load_spec, spec_to_options
from eoscheck.checker.explore import explore
spec = load_spec(sys.argv[1])
t0 = time.perf_counter()
try:
    r = explore(build_machine(spec), spec_to_options(spec))
    out = {"ok": True, "distinct": r.stats.distinct, "generated": r.stats.generated, "depth": r.stats.depth}
except MemoryError:
    out = {"ok": False, "error": "MemoryError"}
out["seconds"] = time.perf_counter() - t0
print(json.dumps(out))
'''

SPARK = r'''
import json, sys, time
from dataclasses import replace
from eoscheck.checker.spec import build_machine, load_spec, spec_to_options
from eoscheck.checker.explore import explore
spec = load_spec(sys.argv[1])
options = replace(spec_to_options(spec), strategy="spark", spark_master=sys.argv[2],
                  spark_partitions=int(sys.argv[4]),
                  spark_conf=(("spark.executor.pyspark.memory", sys.argv[3] + "m"),))
t0 = time.perf_counter()
r = explore(build_machine(spec), options)
print(json.dumps({"ok": True, "seconds": time.perf_counter() - t0, "distinct": r.stats.distinct,
                  "generated": r.stats.generated, "depth": r.stats.depth, "notes": r.notes,
                  "levels": [{"level": lv.level, "new": lv.new, "seconds": round(lv.seconds, 4)}
                             for lv in r.spark_levels]}))
'''


def fit(levels: list[dict]) -> tuple[float, float]:
    import numpy as np
    x = np.array([lv["new"] for lv in levels], dtype=float)
    y = np.array([lv["seconds"] for lv in levels], dtype=float)
    (fixed, per_state), *_ = np.linalg.lstsq(np.vstack([np.ones_like(x), x]).T, y, rcond=None)
    return float(fixed), float(per_state)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spec", type=Path, default=ROOT / "specs" / "large" / "idempotence-benchmark.toml")
    p.add_argument("--limit-mb", type=int, default=400, help="address-space limit per process (MB)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--worker-memory", default="1g", help="each worker's (and executor JVM's) memory")
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--timeout", type=float, default=5400)
    p.add_argument("--no-record", action="store_true")
    args = p.parse_args()
    sys.path.insert(0, str(ROOT))
    from eoscheck.checker.explore.spark_cluster import LocalCluster

    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    bfs = subprocess.run([sys.executable, "-c", BFS, str(args.spec), str(args.limit_mb)],
                         capture_output=True, text=True, timeout=args.timeout, env=env, check=False)
    bfs_out = (json.loads(bfs.stdout.strip().splitlines()[-1]) if bfs.returncode == 0 and bfs.stdout.strip()
               else {"ok": False, "error": (bfs.stderr.strip().splitlines() or [f"exit {bfs.returncode}"])[-1]})
    print(f"bfs under {args.limit_mb} MB: {bfs_out}", flush=True)
    with LocalCluster(workers=args.workers, memory=args.worker_memory) as cluster:
        spark = subprocess.run([sys.executable, "-c", SPARK, str(args.spec), cluster.master,
                                str(args.limit_mb), str(args.partitions)],
                               capture_output=True, text=True, timeout=args.timeout, check=False,
                               env={**env, "SPARK_LOCAL_IP": "127.0.0.1"})
    if spark.returncode != 0:
        raise SystemExit(f"spark run failed:\n{spark.stderr[-3000:]}")
    s = json.loads(spark.stdout.strip().splitlines()[-1])
    fixed, per_state = fit(s["levels"])
    cores = args.workers
    # A billion states over ~40 levels on a cluster of C cores: the per-state part divides by
    # the cores (it is the model's own Python on the executors), the per-level part does not.
    per_billion_core_hours = per_state * 1e9 / 3600
    print(f"spark, {args.workers} workers x 1 core, Python workers limited to {args.limit_mb} MB each: "
          f"{s['distinct']:,} states, depth {s['depth']}, {s['seconds']:.1f} s; fixed {fixed:.3f} s/level, "
          f"{per_state * 1e6:.1f} s per million new states on {cores} cores = "
          f"{per_billion_core_hours * cores:.0f} core-hours per billion states (+ {fixed:.1f} s x levels)",
          flush=True)
    if not args.no_record:
        record = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "spec": args.spec.stem,
                  "limit_mb": args.limit_mb, "workers": args.workers, "partitions": args.partitions,
                  "load_avg_1m": round(os.getloadavg()[0], 2), "bfs": bfs_out,
                  "spark": {k: v for k, v in s.items() if k != "levels"}, "levels": s["levels"],
                  "fixed_per_level": fixed, "per_million_states": per_state * 1e6,
                  "core_hours_per_billion_states": per_billion_core_hours * cores}
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        with RESULTS.open("a") as f:
            f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
