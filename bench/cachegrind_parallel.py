"""Instructions executed by the parallel engine against the BFS, counted by valgrind (par15).

    python bench/cachegrind_parallel.py --symmetry                 # about 10 minutes on 2 idle cores
    python bench/cachegrind_parallel.py --symmetry --keep /tmp/cg  # keep the cachegrind files

Instruction counts (cachegrind's ``Ir``) do not depend on what else the machine runs, so this
answers "what do the workers execute beyond the BFS" on a shared machine where wall-clock cannot.
Four runs of kafka.eos (``--bounds``), each under ``valgrind --tool=cachegrind --cache-sim=no``:

* *startup*: import and build the machine, nothing else;
* *bfs*: the single-process BFS;
* *pre-fork*: the parallel engine with workers that exit at once: what the parent executed before
  each fork (startup plus the head; a forked worker's count includes its parent's up to the fork);
* *parallel*: the parallel engine, 2 workers.

Printed: the BFS's exploration (bfs - startup), the head (pre-fork - startup), each worker's own
share (its file minus the pre-fork count of its fork), the parent's coordination after the forks,
the instruction ratio BFS / (head + slower worker) (an upper bound on the wall-clock ratio: it
leaves out barrier idle time and what two busy cores cost each other), and the C functions whose
counts differ most between the BFS and head + workers.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

RUN = """
import os, sys
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.explore import parallel as P
from eoscheck.checker.registry import find_model
import eoscheck.checker.explore.bfs
mode, sym, bounds, head = sys.argv[1], sys.argv[2] == "1", sys.argv[3], int(sys.argv[4])
if head >= 0:
    P.HEAD_FRONTIER = head
machine = find_model("kafka.eos").machine(bounds={k: int(v) for k, v in (kv.split("=") for kv in bounds.split(","))})
if mode == "startup":
    raise SystemExit(0)
if mode == "prefork":
    P._worker_main = lambda *a, **k: os._exit(0)
try:
    r = explore(machine, ExploreOptions(strategy="bfs" if mode == "bfs" else "parallel", workers=2,
                                        symmetry=sym, stop_at_first=False))
    print(mode, r.stats.distinct, r.stats.generated)
except Exception as exc:  # prefork: the parent finds its workers gone
    print(mode, type(exc).__name__)
"""


def load(path: str) -> Counter[str]:
    """Ir per (file, function) of one cachegrind output file."""
    counts: Counter[str] = Counter()
    fl = fn = ""
    with open(path) as f:
        for line in f:
            if line.startswith("fl="):
                fl = line[3:].strip().rsplit("/", 1)[-1]
            elif line.startswith("fn="):
                fn = line[3:].strip()
            elif line[:1].isdigit():
                parts = line.split()
                if len(parts) >= 2:
                    counts[f"{fl}:{fn}"] += int(parts[1])
    return counts


def total(counts: Counter[str]) -> int:
    return sum(counts.values())


def run(out: str, mode: str, symmetry: bool, bounds: str, head: int) -> list[str]:
    script = os.path.join(out, "run.py")
    with open(script, "w") as f:
        f.write(RUN)
    subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                    f"--cachegrind-out-file={out}/cg.{mode}.%p", sys.executable, script, mode,
                    "1" if symmetry else "0", bounds, str(head)], check=True, capture_output=True)
    # by pid: the parent first, then the workers in the order they were forked
    return sorted(glob.glob(f"{out}/cg.{mode}.*"), key=lambda p: int(p.rsplit(".", 1)[1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bounds", default="restarts=1,transactions=2,input_records=1,max_ticks=2")
    parser.add_argument("--symmetry", action="store_true")
    parser.add_argument("--keep", metavar="DIR", help="write the cachegrind files here and keep them")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--head", type=int, default=-1, metavar="STATES",
                        help="parallel.HEAD_FRONTIER for the parallel runs (default: the engine's)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind not found", file=sys.stderr)
        return 2
    out = args.keep or tempfile.mkdtemp(prefix="cachegrind-parallel-")
    os.makedirs(out, exist_ok=True)
    try:
        startup = load(run(out, "startup", args.symmetry, args.bounds, args.head)[0])
        bfs = load(run(out, "bfs", args.symmetry, args.bounds, args.head)[0])
        _, *pre = map(load, run(out, "prefork", args.symmetry, args.bounds, args.head))
        par_parent, *workers = map(load, run(out, "parallel", args.symmetry, args.bounds, args.head))
    finally:
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)
    if not workers:
        print("the parallel run ended in its head (no worker forked): raise the bounds or lower --head")
        return 2
    bfs_x = total(bfs) - total(startup)
    head = Counter(pre[0])
    head.subtract(startup)
    own = []
    for w, pre_w in zip(workers, pre):
        c = Counter(w)
        c.subtract(pre_w)
        own.append(c)
    coordination = total(par_parent) - total(pre[-1])
    print(f"kafka.eos {args.bounds} symmetry={args.symmetry} (Ir, 1e9 instructions)")
    print(f"  BFS exploration {bfs_x / 1e9:.3f}; head {total(head) / 1e9:.3f}; workers "
          + " / ".join(f"{total(c) / 1e9:.3f}" for c in own)
          + f"; parent after the forks {coordination / 1e9:.3f}")
    extra = total(head) + sum(map(total, own)) - bfs_x
    print(f"  head + workers - BFS: {extra / 1e9:.3f} ({100 * extra / bfs_x:+.1f}%)")
    path = total(head) + max(map(total, own))
    print(f"  instruction ratio BFS / (head + slower worker): {bfs_x / path:.3f}x")
    diff: Counter[str] = Counter()
    for c in own:
        diff.update(c)
    diff.update(head)
    bfs_only = Counter(bfs)
    bfs_only.subtract(startup)
    diff.subtract(bfs_only)
    print("  functions, head + workers minus BFS (M instructions):")
    for name, v in sorted(diff.items(), key=lambda kv: -abs(kv[1]))[:args.top]:
        print(f"    {v / 1e6:+9.1f}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
