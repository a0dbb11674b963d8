"""Before/after on a shared machine: the same kafka.eos configurations run alternately by two Python
interpreters (two checkouts, e.g. main's and a branch's venv), each run in a fresh subprocess,
compared in distinct states per CPU-second (``time.process_time``), which other jobs on the machine
disturb far less than wall clock.

    python bench/bench_ab.py --before /usr/bin/env:python3 --after .venv/bin/python --repeat 3 \\
        --plan kafka-4.0:restarts=1,transactions=2,input_records=1,max_ticks=2 --states 300000 --md eos-ab.md

A plan entry is bench_eos.py's (``[model@]variant:bound=value,...[/symmetry]``); with no --plan,
bench_eos.py's whole plan. ``--before``/``--after`` name an interpreter (``a:b`` runs ``a b``).
Counts must agree between the two (the table says so). Appends JSON records to
``bench/results/ab.jsonl`` and writes a markdown table (medians) to ``bench/results/<--md>``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def child(plan: str, states: int | None) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from bench_eos import EOS, parse
    from eoscheck.checker.explore import explore
    from eoscheck.checker.explore.options import ExploreOptions
    from eoscheck.checker.registry import find_model
    from eoscheck.model.machines.eos import machine

    import eoscheck

    model, variant, bounds, symmetry = parse(plan)
    m = machine(variant, **bounds) if model == EOS else find_model(model).machine(variant, bounds=bounds)
    cpu, wall = time.process_time(), time.perf_counter()
    r = explore(m, ExploreOptions(stop_at_first=False, symmetry=symmetry, max_states=states))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"checkout": str(Path(eoscheck.__file__).resolve().parent.parent), "plan": plan,
            "distinct": r.stats.distinct, "generated": r.stats.generated, "depth": r.stats.depth,
            "verdict": r.verdict, "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
            "distinct_per_cpu_s": round(r.stats.distinct / cpu),
            "peak_rss_bytes_per_state": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / r.stats.distinct)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=False, default="")
    parser.add_argument("--after", default=sys.executable)
    parser.add_argument("--plan", action="append")
    parser.add_argument("--states", type=int, default=None, help="max_states per run (default: the whole space)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--md", default="ab.md")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.states)))
        return 0
    if not args.before:
        print("bench_ab: --before INTERPRETER is required", file=sys.stderr)
        return 2
    if args.states is not None and args.states <= 0 or args.repeat <= 0:
        print("bench_ab: --states and --repeat must be positive", file=sys.stderr)
        return 2
    sys.path.insert(0, str(HERE))
    from bench_eos import PLAN, show
    plans = args.plan or [show(*entry) for entry in PLAN]
    RESULTS.mkdir(exist_ok=True)
    lines = [("| configuration | distinct | before /CPU-s | after /CPU-s | after/before | peak RSS B/state before, after "
             "| same counts | loads |"),
             "|---|---:|---:|---:|---:|---|---|---|"]
    for plan in plans:
        runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
        loads = []
        for _ in range(args.repeat):
            for side in ("before", "after"):
                interp = getattr(args, side).split(":")
                cmd = [*interp, __file__, "--child", plan, *(["--states", str(args.states)] if args.states else [])]
                load = os.getloadavg()[0]
                loads.append(load)
                try:
                    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd="/tmp").stdout
                except subprocess.CalledProcessError as exc:
                    print(f"bench_ab: {side} failed on {plan}: {exc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
                    return 2
                rec = {**json.loads(out.splitlines()[-1]), "side": side, "load_before": round(load, 2),
                       "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
                with open(RESULTS / "ab.jsonl", "a") as f:
                    f.write(json.dumps(rec) + "\n")
                print(json.dumps(rec), flush=True)
                runs[side].append(rec)
        b = statistics.median(r["distinct_per_cpu_s"] for r in runs["before"])
        a = statistics.median(r["distinct_per_cpu_s"] for r in runs["after"])
        same = len({(r["distinct"], r["generated"], r["depth"], r["verdict"]) for side in runs.values() for r in side}) == 1
        first = runs["after"][0]
        rss = [statistics.median(r.get("peak_rss_bytes_per_state", 0) for r in runs[side]) for side in ("before", "after")]
        lines.append(f"| {plan} | {first['distinct']:,} | {b:,.0f} | {a:,.0f} | {a / b:.2f}x | {rss[0]:,.0f}, {rss[1]:,.0f} | "
                     f"{'yes' if same else 'NO'} | "
                     f"{min(loads):.1f}-{max(loads):.1f} |")
    (RESULTS / args.md).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
