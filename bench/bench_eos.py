"""kafka.eos throughput: single-process BFS on configurations of about 10^5 states and more, each in a
fresh subprocess, every property checked (as a spec would).

    python bench/bench_eos.py                     # the default plan, 3 repeats
    python bench/bench_eos.py --repeat 1 --plan kafka-4.0:producers=2,lost_responses=1

Appends one JSON record per run to ``bench/results/eos.jsonl`` and writes the medians as a markdown
table to ``bench/results/eos.md``. Figures are wall clock on a shared machine; each record carries
the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

PLAN = [
    # issue 12's yardstick: about a million states (a restart, consume-transform-produce, a clock)
    ("kafka-4.0", {"restarts": 1, "transactions": 2, "input_records": 1, "max_ticks": 2}),
    ("kafka-4.0", {"producers": 2, "lost_responses": 1, "produce_timeouts": 1}),
    ("kafka-3.0-3.5", {"producers": 2, "lost_responses": 1, "txn_timeouts": 1}),
    # the kafka.idempotent_produce preset (the older machine's bounds and variant; its four properties)
    ("preset.idempotent_produce/kafka-shipped", {"records": 5, "max_in_flight": 3, "lost_responses": 1,
                                                 "delivery_timeout": 4, "producer_id_expiration": 4,
                                                 "max_ticks": 6}),
]


def run_one(variant: str, bounds: dict[str, int]) -> dict[str, Any]:
    from eoscheck.checker.explore import explore
    from eoscheck.checker.explore.options import ExploreOptions
    from eoscheck.checker.registry import find_model
    from eoscheck.model.machines.eos import machine

    if variant.startswith("preset."):  # preset.<name>/<the older machine's variant>: the older machine's bounds
        preset, _, legacy_variant = variant.removeprefix("preset.").partition("/")
        m = find_model(f"kafka.eos.{preset}").machine(legacy_variant, bounds=bounds)
    else:
        m = machine(variant, **bounds)
    start = time.perf_counter()
    result = explore(m, ExploreOptions(stop_at_first=False))
    elapsed = time.perf_counter() - start
    return {"variant": variant, "bounds": bounds, "distinct": result.stats.distinct,
            "generated": result.stats.generated, "depth": result.stats.depth, "seconds": round(elapsed, 3),
            "distinct_per_s": round(result.stats.distinct / elapsed), "verdict": result.verdict,
            "violated": sorted({v.property for v in result.violations})}


def parse(text: str) -> tuple[str, dict[str, int]]:
    variant, _, rest = text.partition(":")
    bounds = {k: int(v) for k, v in (kv.split("=") for kv in rest.split(",") if kv)}
    return variant, bounds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", action="append", help="variant:bound=value,...")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        variant, bounds = parse(args.child)
        print(json.dumps(run_one(variant, bounds)))
        return 0
    plan = [parse(p) for p in args.plan] if args.plan else PLAN
    RESULTS.mkdir(exist_ok=True)
    rows = []
    for variant, bounds in plan:
        text = variant + ":" + ",".join(f"{k}={v}" for k, v in bounds.items())
        runs = []
        for _ in range(args.repeat):
            load = os.getloadavg()[0]
            out = subprocess.run([sys.executable, __file__, "--child", text], check=True, capture_output=True,
                                 text=True).stdout
            record = {**json.loads(out), "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2),
                      "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            with open(RESULTS / "eos.jsonl", "a") as f:
                f.write(json.dumps(record) + "\n")
            runs.append(record)
            print(json.dumps(record), flush=True)
        rows.append((text, runs))
    lines = ["| kafka.eos configuration | distinct | generated | depth | median s | median distinct/s | runs |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    # rows of configurations not run this time stay as they were
    fresh = {}
    for text, runs in rows:
        r = runs[0]
        fresh[text] = (f"| {text} | {r['distinct']:,} | {r['generated']:,} | {r['depth']} | "
                       f"{statistics.median(x['seconds'] for x in runs):.1f} | "
                       f"{statistics.median(x['distinct_per_s'] for x in runs):,.0f} | {len(runs)} |")
    table = RESULTS / "eos.md"
    old = table.read_text().splitlines()[2:] if table.exists() else []
    for line in old:
        text = line.split("|")[1].strip()
        lines.append(fresh.pop(text, line))
    lines += fresh.values()
    table.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
