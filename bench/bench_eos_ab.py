"""kafka.eos before/after: ``bench_eos.py``'s plan run by two interpreters (two checkouts), interleaved
entry by entry, each run in a fresh process, with wall-clock and CPU-second rates and the load.

    python bench/bench_eos_ab.py --before python3 --after /work/venvs/NAME/bin/python --md eos-NAME.md

``--before`` and ``--after`` are interpreters whose ``eoscheck`` is the checkout to measure (the
system ``python3`` imports /work/main). On a shared machine the CPU-second rate
(``time.process_time``) is the steadier figure; both are in the table. Each record is appended
to ``bench/results/eos-ab.jsonl``. ``--repeat N`` runs each entry N times as before/after pairs and
keeps each side's least CPU time (and its run's wall clock): a heavily shared machine slows a CPU
second too, by up to ~10% between neighbouring runs, and the least of a few is the steadier figure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

from bench_eos import PLAN, show

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

#: the child's run of one plan entry up to its timings (``bench_env_ab.py`` reads more of the process after it)
CHILD_RUN = """
import json, sys, time
sys.path.insert(0, {bench!r})
from bench_eos import EOS, parse
from eoscheck.checker.explore import explore
from eoscheck.checker.explore.options import ExploreOptions
from eoscheck.checker.registry import find_model
from eoscheck.model.machines.eos import machine
model, variant, bounds, symmetry = parse({plan!r})
m = machine(variant, **bounds) if model == EOS else find_model(model).machine(variant, bounds=bounds)
wall, cpu = time.perf_counter(), time.process_time()
r = explore(m, ExploreOptions(stop_at_first=False, symmetry=symmetry, max_states={max_states}))
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
"""
CHILD = CHILD_RUN + """
print(json.dumps({{"distinct": r.stats.distinct, "generated": r.stats.generated, "depth": r.stats.depth,
                  "verdict": r.verdict, "violated": sorted({{v.property for v in r.violations}}),
                  "wall": round(wall, 2), "cpu": round(cpu, 2)}}))
"""


def run(python: str, plan: str, max_states: int | None = None) -> dict[str, object]:
    load = os.getloadavg()[0]
    out = subprocess.run([python, "-c", CHILD.format(bench=str(HERE), plan=plan, max_states=max_states)], check=True,
                         capture_output=True, text=True, cwd="/tmp").stdout
    rec = json.loads(out)
    rec.update(load_before=round(load, 2), load_after=round(os.getloadavg()[0], 2), python=python, plan=plan,
               max_states=max_states,
               utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    with open(RESULTS / "eos-ab.jsonl", "a") as f:
        f.write(json.dumps(rec) + "\n")
    return rec


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--plan", action="append")
    parser.add_argument("--md", default="eos-ab.md")
    parser.add_argument("--max-states", type=int, default=None,
                        help="stop each run there (a loaded machine: the rate of the first N states)")
    parser.add_argument("--append", action="store_true", help="add the rows to the --md table")
    parser.add_argument("--repeat", type=int, default=1, help="before/after pairs per entry (each side's least CPU time)")
    args = parser.parse_args()
    plans = args.plan or [show(*entry) for entry in PLAN]
    rows = []
    for plan in plans:
        pairs = [(run(args.before, plan, args.max_states), run(args.after, plan, args.max_states))
                 for _ in range(max(args.repeat, 1))]
        before = min((b for b, _ in pairs), key=lambda r: float(r["cpu"]))  # type: ignore[arg-type]
        after = min((a for _, a in pairs), key=lambda r: float(r["cpu"]))  # type: ignore[arg-type]
        before["load_before"], after["load_after"] = pairs[0][0]["load_before"], pairs[-1][1]["load_after"]
        same = all(r[k] == before[k] for pair in pairs for r in pair
                   for k in ("distinct", "generated", "depth", "verdict", "violated"))
        rows.append((plan, before, after, same))
        print(plan, before, after, flush=True)
    md = RESULTS / args.md
    lines = ["| configuration | states | before: /s wall, /cpu-s | after: /s wall, /cpu-s | cpu speed-up | counts equal | load |",
             "|---|---:|---:|---:|---:|---|---|"]
    if args.append and md.exists():
        lines = md.read_text().splitlines()
    for plan, b, a, same in rows:
        def rate(r: dict[str, object]) -> str:
            d = float(r["distinct"])  # type: ignore[arg-type]
            return f"{d / float(r['wall']):,.0f}, {d / float(r['cpu']):,.0f}"  # type: ignore[arg-type]
        speed = float(b["cpu"]) / float(a["cpu"])  # type: ignore[arg-type]
        lines.append(f"| `{plan}` | {a['distinct']:,} | {rate(b)} | {rate(a)} | {speed:.2f}x | {'yes' if same else 'NO'} "
                     f"| {b['load_before']}-{a['load_after']} |")
    md.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
