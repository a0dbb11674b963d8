"""kafka.eos's producer symmetry on a consumer group and on read_committed readers: distinct states,
wall clock and CPU time with and without symmetry, each run in a fresh subprocess, every property
checked (as a spec would), full BFS.

    python bench/bench_symmetry_groups.py                       # the plan below, once each
    python bench/bench_symmetry_groups.py --repeat 2 --label main --jsonl /tmp/x.jsonl

Run it from two checkouts with the same ``--jsonl`` and different ``--label`` to compare a model
before and after a change (interleave the invocations: the machine is shared). Prints one line per
run; the results file gets one JSON record per run with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

#: (name, variant, bounds)
PLAN: list[tuple[str, str, dict[str, int]]] = [
    ("pipeline shape", "kafka-3.0-3.5", {"producers": 2, "members": 2, "input_records": 1, "partitions": 1,
                                         "transactions": 2, "rebalances": 2, "rejoins": 1, "max_epoch": 4}),
    ("group, no rejoin", "kafka-3.0-3.5", {"producers": 2, "members": 2, "input_records": 1, "partitions": 1,
                                           "transactions": 2, "rebalances": 2, "max_epoch": 4}),
    ("readers", "kafka-3.0-3.5", {"producers": 2, "partitions": 2, "readers": 1, "lost_responses": 1}),
    ("readers, faults", "kafka-3.0-3.5", {"producers": 2, "partitions": 2, "readers": 1, "lost_responses": 1,
                                          "txn_timeouts": 1}),
]


def child(variant: str, bounds: dict[str, int], symmetry: bool) -> dict[str, Any]:
    from eoscheck.checker.explore import ExploreOptions, explore
    from eoscheck.model.machines.eos import machine

    m = machine(variant, **bounds)
    cpu, wall = time.process_time(), time.perf_counter()
    r = explore(m, ExploreOptions(stop_at_first=False, symmetry=symmetry))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"distinct": r.stats.distinct, "generated": r.stats.generated, "verdict": r.verdict,
            "violated": sorted({v.property for v in r.violations}), "wall": wall, "cpu": cpu,
            "declared": bool(m.has_symmetry())}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--label", default="")
    parser.add_argument("--jsonl", default="")
    parser.add_argument("--only", default="", help="run only the plan entries whose name contains this")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        job = json.loads(args.child)
        print(json.dumps(child(job["variant"], job["bounds"], job["symmetry"])))
        return 0
    for _ in range(args.repeat):
        for name, variant, bounds in PLAN:
            if args.only not in name:
                continue
            for symmetry in (False, True):
                load = os.getloadavg()[0]
                job = json.dumps({"variant": variant, "bounds": bounds, "symmetry": symmetry})
                out = subprocess.run([sys.executable, __file__, "--child", job], capture_output=True, text=True,
                                     check=True)
                rec = {"label": args.label, "name": name, "variant": variant, "bounds": bounds,
                       "symmetry": symmetry, **json.loads(out.stdout.strip().splitlines()[-1]),
                       "load_before": load, "load_after": os.getloadavg()[0]}
                print(f"{args.label:8} {name:18} symmetry={symmetry!s:5} {rec['distinct']:>9,} distinct "
                      f"{rec['generated']:>10,} generated  {rec['wall']:6.1f} s wall {rec['cpu']:6.1f} s cpu "
                      f"{rec['distinct'] / rec['cpu']:>8,.0f}/cpu-s  {rec['verdict']} {rec['violated']} "
                      f"load {load:.1f}", flush=True)
                if args.jsonl:
                    with open(args.jsonl, "a") as f:
                        f.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
