"""RDD with columnar chunks vs DataFrame/Arrow vs per-record RDD, for one BFS level's data movement.

    python3 bench/bench_spark_api.py [--states 1000000] [--master 'local[2]']

Each variant does what a level does apart from running the model: every source partition makes
``states`` candidate states (flat int tuples, as models build them) with their fingerprints,
moves each to the partition ``fp % P`` that owns it, and there removes those already visited
(a sorted ``uint64`` array per partition) and keeps the new ones with their states:

* ``rdd-chunks``  — the engine's design: one record per (source, target) pair holding numpy
  fingerprints and the pickled list of states; ``partitionBy``; anti-join with ``searchsorted``;
* ``dataframe-arrow`` — ``mapInArrow`` producing (fp, partition, state bytes) rows, ``repartition``
  on the partition column, ``mapInArrow`` anti-join with numpy on the Arrow columns;
* ``rdd-records`` — one (fp, state) record per state, ``partitionBy``, a set per partition.

Appends to bench/results/spark.jsonl with ``"bench": "api"``.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "spark.jsonl"
MASK = (1 << 64) - 1


def make_states(lo: int, hi: int) -> list[tuple]:
    return [(0, i % 7, i % 5, i % 3, i, i % 11, i % 13, 0, 1, i % 2) for i in range(lo, hi)]


def visited_for(pid: int, parts: int, n: int) -> np.ndarray:
    """Half of the candidates were seen before (a typical level's hit rate). Cached in the
    reused Python worker (the engine keeps visited in Spark's cache, it does not rebuild it);
    on ``builtins`` because functions of ``__main__`` travel by value with fresh globals."""
    import builtins
    cache = builtins.__dict__.setdefault("_eoscheck_bench_visited", {})
    key = (pid, parts, n)
    if key not in cache:
        fps = np.array([hash(s) & MASK for s in make_states(0, n)[::2]], dtype=np.uint64)
        cache[key] = np.sort(fps[fps % np.uint64(parts) == pid])
    return cache[key]


def rdd_chunks(sc, parts: int, n: int) -> int:
    from eoscheck.checker.explore.spark_level import identity_partition

    def source(pid, _):
        states = make_states(n // parts * pid, n // parts * (pid + 1))
        buckets = [([], []) for _ in range(parts)]
        for s in states:
            h = hash(s) & MASK
            b = buckets[h % parts]
            b[0].append(h)
            b[1].append(s)
        for t, (fps, sts) in enumerate(buckets):
            yield t, (np.asarray(fps, dtype=np.uint64), pickle.dumps(sts, protocol=5))

    def antijoin(pid, records):
        chunks = [c for _, c in records]
        fps = np.concatenate([c[0] for c in chunks])
        states = [s for c in chunks for s in pickle.loads(c[1])]
        seen = visited_for(pid, parts, n)
        uniq, first = np.unique(fps, return_index=True)
        pos = np.searchsorted(seen, uniq)
        pos[pos == len(seen)] = 0
        keep = np.sort(first[seen[pos] != uniq]) if len(seen) else np.sort(first)
        new = [states[i] for i in keep.tolist()]
        yield len(new)

    rdd = sc.parallelize(range(parts), parts).mapPartitionsWithIndex(source)
    return sum(rdd.partitionBy(parts, identity_partition).mapPartitionsWithIndex(antijoin).collect())


def dataframe_arrow(spark, parts: int, n: int) -> int:
    import pyarrow as pa

    def source(batches):
        for batch in batches:
            for pid in batch.column(0).to_pylist():
                states = make_states(n // parts * pid, n // parts * (pid + 1))
                fps = [hash(s) & MASK for s in states]
                arr = np.asarray(fps, dtype=np.uint64)
                yield pa.record_batch({
                    "fp": pa.array(arr.view(np.int64)),
                    "part": pa.array((arr % np.uint64(parts)).astype(np.int32)),
                    "state": pa.array([pickle.dumps(s, protocol=5) for s in states], type=pa.binary())})

    def antijoin(batches):
        tables = [pa.Table.from_batches([b]) for b in batches]
        if not tables:
            return
        t = pa.concat_tables(tables)
        all_fps = t.column("fp").to_numpy().view(np.uint64)
        part = t.column("part").to_numpy()
        total = 0
        # hash partitioning on the column may put several owners in one Spark partition
        for pid in np.unique(part).tolist():
            rows = np.nonzero(part == pid)[0]
            fps = all_fps[rows]
            seen = visited_for(pid, parts, n)
            uniq, first = np.unique(fps, return_index=True)
            pos = np.searchsorted(seen, uniq)
            pos[pos == len(seen)] = 0
            keep = np.sort(first[seen[pos] != uniq]) if len(seen) else np.sort(first)
            states = t.column("state").take(pa.array(rows[keep])).to_pylist()
            total += len([pickle.loads(b) for b in states])
        yield pa.record_batch({"new": pa.array([total], type=pa.int64())})

    src = spark.range(parts, numPartitions=parts).selectExpr("cast(id as int) as pid")
    df = src.mapInArrow(source, "fp long, part int, state binary").repartition(parts, "part")
    return int(sum(r["new"] for r in df.mapInArrow(antijoin, "new long").collect()))


def rdd_records(sc, parts: int, n: int) -> int:
    def source(pid, _):
        for s in make_states(n // parts * pid, n // parts * (pid + 1)):
            yield hash(s) & MASK, s

    def antijoin(pid, records):
        seen = set(visited_for(pid, parts, n).tolist())
        new = {}
        for fp, s in records:
            if fp not in seen and fp not in new:
                new[fp] = s
        yield len(new)

    rdd = sc.parallelize(range(parts), parts).mapPartitionsWithIndex(source)
    return sum(rdd.partitionBy(parts, lambda k: k % parts).mapPartitionsWithIndex(antijoin).collect())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--states", type=int, default=1_000_000)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--no-record", action="store_true")
    args = p.parse_args()
    from eoscheck.checker.explore.spark_session import default_partitions, start_session
    spark = start_session(args.master, conf={"spark.sql.execution.arrow.maxRecordsPerBatch": "100000"})
    sc = spark.sparkContext
    parts = default_partitions(sc)
    n = args.states
    variants = {"rdd-chunks": lambda: rdd_chunks(sc, parts, n),
                "dataframe-arrow": lambda: dataframe_arrow(spark, parts, n),
                "rdd-records": lambda: rdd_records(sc, parts, n)}
    try:
        for f in variants.values():  # warm the workers and the JIT once
            f()
        times: dict[str, list[float]] = {k: [] for k in variants}
        answers = {}
        for _ in range(args.repeat):
            for name, f in variants.items():
                t0 = time.perf_counter()
                answers[name] = f()
                times[name].append(time.perf_counter() - t0)
    finally:
        spark.stop()
    assert len(set(answers.values())) == 1, answers
    best = min(np.median(v) for v in times.values())
    for name, v in times.items():
        med = float(np.median(v))
        print(f"{name:16s} {med:6.2f} s  ({n / med / 1e3:,.0f}k candidates/s, {med / best:.2f}x the best)")
    if not args.no_record:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        with RESULTS.open("a") as f:
            f.write(json.dumps({"bench": "api", "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                "master": args.master, "partitions": parts, "candidates": n,
                                "new": answers["rdd-chunks"], "load_avg_1m": round(os.getloadavg()[0], 2),
                                "median_seconds": {k: float(np.median(v)) for k, v in times.items()}}) + "\n")


if __name__ == "__main__":
    main()
