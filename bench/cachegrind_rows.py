"""Instructions the single-core BFS executes on ``bench_eos.py``'s plan rows, counted by valgrind
(perf15-perf17b's method, as a script).

    python bench/cachegrind_rows.py                                  # rows 6, 0, 4, 5; 60,000 states
    python bench/cachegrind_rows.py --rows 6 --states 120000 --python /work/venvs/base/bin/python

Instruction counts (cachegrind's ``Ir``) do not depend on what else the machine runs. Per row, two
runs under ``valgrind --tool=cachegrind --cache-sim=no``: the first ``--states`` states of the row
(every property checked, as ``bench_eos.py`` runs it) and the first state alone (start-up: imports,
building the machine, compiling its generated code). Printed per row: distinct / generated / depth
of the run, total Ir, start-up Ir and the BFS's Ir (the difference). ``--python`` picks the tree
to measure (a venv's interpreter); a copy's package must be what that interpreter imports.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

RUN = """
import sys
sys.path.insert(0, sys.argv[3])
from bench_eos import EOS, PLAN
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.registry import find_model
from eoscheck.model.machines.eos import machine
row, n = int(sys.argv[1]), int(sys.argv[2])
model, variant, bounds, sym = PLAN[row]
m = machine(variant, **bounds) if model == EOS else find_model(model).machine(variant, bounds=bounds)
r = explore(m, ExploreOptions(stop_at_first=False, symmetry=sym, max_states=n))
print("counts", r.stats.distinct, r.stats.generated, r.stats.depth)
"""

_IR = re.compile(r"I\s+refs:\s+([\d,]+)")


def _ir(python: str, row: int, states: int, out: str) -> tuple[int, str]:
    bench = os.path.dirname(os.path.abspath(__file__))
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}",
                           python, "-c", RUN, str(row), str(states), bench],
                          capture_output=True, text=True, check=True)
    m = _IR.search(done.stderr)
    if m is None:
        raise SystemExit(f"no instruction count in valgrind's output for row {row}")
    counts = next((line[len("counts "):] for line in done.stdout.splitlines() if line.startswith("counts ")), "?")
    return int(m.group(1).replace(",", "")), counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="6,0,4,5", help="plan rows of bench_eos.py, comma-separated")
    ap.add_argument("--states", type=int, default=60_000)
    ap.add_argument("--python", default=sys.executable, help="the interpreter (tree) to measure")
    ap.add_argument("--keep", help="a directory for the cachegrind files (default: discarded)")
    args = ap.parse_args()
    try:
        rows = [int(x) for x in args.rows.split(",")]
    except ValueError:
        raise SystemExit(f"--rows takes numbers separated by commas, not {args.rows!r}") from None
    keep = args.keep or tempfile.mkdtemp(prefix="cg-rows-")
    os.makedirs(keep, exist_ok=True)
    print("| row | distinct / generated / depth | total Ir | start-up Ir | BFS Ir |")
    print("|---|---|---:|---:|---:|")
    for row in rows:
        total, counts = _ir(args.python, row, args.states, os.path.join(keep, f"r{row}-{args.states}.out"))
        start, _ = _ir(args.python, row, 1, os.path.join(keep, f"r{row}-1.out"))
        print(f"| {row} | {counts} | {total / 1e6:,.1f}M | {start / 1e6:,.1f}M | {(total - start) / 1e6:,.1f}M |",
              flush=True)


if __name__ == "__main__":
    main()
