"""kafka.eos with symmetry off, with the producers' scalarset only, and with producers and output
partitions (``model/machines/eos_partition_symmetry.py``): distinct states, generated states, wall
clock and CPU seconds per configuration, each run in a fresh process, the three modes interleaved
round by round (the least CPU time of ``--repeat`` rounds is kept, with its run's wall clock).

    /work/venvs/NAME/bin/python bench/bench_partition_symmetry.py --repeat 2 --md symmetry-partitions.md

"producers only" is ``EosMachine`` with the ``partition`` scalarset left out
(``scalarsets_in_force``), i.e. main's reduction before the partition symmetry.
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
RESULTS = HERE / "results"

#: (variant, bounds): the bench_eos symmetry entry (two partitions by default), three partitions, and
#: issue 12's yardstick (one producer, two partitions)
PLAN: list[tuple[str, dict[str, int]]] = [
    ("kafka-4.0", {"producers": 2, "lost_responses": 1, "produce_timeouts": 1}),
    ("kafka-4.0", {"producers": 2, "partitions": 3, "lost_responses": 1}),
    ("kafka-4.0", {"restarts": 1, "transactions": 2, "input_records": 1, "max_ticks": 2}),
]
MODES = ("off", "producers", "both")

CHILD = """
import json, sys, time
from eoscheck.checker.explore import explore
from eoscheck.checker.explore.options import ExploreOptions
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_model import BOUNDS
from eoscheck.model.protocol import VARIANTS

class ProducersOnly(EosMachine):
    def scalarsets_in_force(self, declared):
        return tuple(ss for ss in super().scalarsets_in_force(declared) if ss != "partition")

variant, bounds, mode = json.loads(sys.argv[1])
if mode == "producers":
    m = ProducersOnly(VARIANTS[variant].protocol, {**{k: b.default for k, b in BOUNDS.items()}, **bounds})
else:
    m = machine(variant, **bounds)
wall, cpu = time.perf_counter(), time.process_time()
r = explore(m, ExploreOptions(stop_at_first=False, symmetry=mode != "off"))
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
print(json.dumps({"distinct": r.stats.distinct, "generated": r.stats.generated, "depth": r.stats.depth,
                  "verdict": r.verdict, "violated": sorted({v.property for v in r.violations}),
                  "wall": round(wall, 2), "cpu": round(cpu, 2)}))
"""


def run(variant: str, bounds: dict[str, int], mode: str) -> dict[str, object]:
    load = os.getloadavg()[0]
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps([variant, bounds, mode])], check=True,
                         capture_output=True, text=True, cwd="/tmp").stdout
    rec: dict[str, object] = json.loads(out)
    rec.update(variant=variant, bounds=bounds, mode=mode, load_before=round(load, 2),
               load_after=round(os.getloadavg()[0], 2), utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    return rec


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--md", help="write the table to bench/results/MD")
    args = ap.parse_args()
    best: dict[tuple[int, str], dict[str, object]] = {}
    for _ in range(args.repeat):
        for i, (variant, bounds) in enumerate(PLAN):
            for mode in MODES:
                rec = run(variant, bounds, mode)
                print(json.dumps(rec), flush=True)
                key = (i, mode)
                if key not in best or float(rec["cpu"]) < float(best[key]["cpu"]):  # type: ignore[arg-type]
                    best[key] = rec
    lines = ["| configuration | symmetry | distinct | generated | reduction | CPU s | distinct/CPU-s | wall s | load |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for i, (variant, bounds) in enumerate(PLAN):
        off = int(best[(i, "off")]["distinct"])  # type: ignore[call-overload]
        for mode in MODES:
            r = best[(i, mode)]
            distinct, cpu = int(r["distinct"]), float(r["cpu"])  # type: ignore[call-overload,arg-type]
            conf = f"{variant}: " + ", ".join(f"{k}={v}" for k, v in bounds.items())
            name = {"off": "off", "producers": "producers only", "both": "producers + partitions"}[mode]
            lines.append(f"| {conf} | {name} | {distinct:,} | {int(r['generated']):,} | {off / distinct:.2f}x | "  # type: ignore[call-overload]
                         f"{cpu:.1f} | {distinct / cpu:,.0f} | {float(r['wall']):.1f} | "  # type: ignore[arg-type]
                         f"{r['load_before']}-{r['load_after']} |")
    table = "\n".join(lines)
    print(table)
    if args.md:
        (RESULTS / args.md).write_text(table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
