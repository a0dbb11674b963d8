"""Where the parallel engine's workers spend their time, phase by phase and level by level.

    python bench/profile_parallel.py                          # kafka.eos config 1, 2 workers
    python bench/profile_parallel.py --bounds restarts=1,transactions=2,input_records=1,max_ticks=1 --symmetry

Each worker's pipe commands (``expand``, ``settle``, ``advance``, ...) are timed in CPU seconds of
that worker, per level. Printed: per worker the CPU of each command and of the expansion core
(``Expander.expand_chunk``, ``check_invariants``), the seconds it spent blocked on its pipe, and two
figures that do not depend on what else the machine runs (CPU time, not wall-clock):

* *barrier loss*: over every (level, command), the slowest worker's CPU minus the fastest's, summed:
  what the faster workers idle at the level barriers on otherwise idle cores;
* *simulated wall*: over every (level, command), the slowest worker's CPU, summed, plus the parent's
  CPU (the levels it expands itself before forking, ``--head``, and its coordination): the run's
  wall-clock on two idle cores, scheduling aside.

Compare the simulated wall with a BFS's CPU seconds (``bench/bench_scale.py``) for the speedup two
idle cores would give.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections import defaultdict
from typing import Any


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="kafka.eos")
    parser.add_argument("--bounds", default="restarts=1,transactions=2,input_records=1,max_ticks=2")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--symmetry", action="store_true")
    parser.add_argument("--head", type=int, default=None, metavar="STATES",
                        help="parallel.HEAD_FRONTIER: the parent expands levels itself below this many states "
                             "per worker (0: the workers start from the initial states)")
    args = parser.parse_args()

    from eoscheck.checker.explore import ExploreOptions
    from eoscheck.checker.explore import parallel as P
    from eoscheck.checker.registry import find_model

    out_dir = tempfile.mkdtemp(prefix="profile-parallel-")
    orig_serve = P._Worker.serve

    def serve(self: Any) -> None:
        per_level: list[tuple[str, int, float]] = []
        totals: defaultdict[str, float] = defaultdict(float)
        depth = [0]
        blocked = [0.0]
        recv = self.conn.recv

        def timed_recv() -> Any:
            t = time.perf_counter()
            try:
                return recv()
            finally:
                blocked[0] += time.perf_counter() - t

        self.conn.recv = timed_recv

        def wrap(name: str, fn: Any) -> Any:
            def timed(*a: Any, **kw: Any) -> Any:
                c, level = time.process_time(), self.level
                depth[0] += 1
                try:
                    return fn(*a, **kw)
                finally:
                    depth[0] -= 1
                    spent = time.process_time() - c
                    totals[name] += spent
                    if depth[0] == 0:  # a pipe command, not one nested in another
                        per_level.append((name, level, spent))
            return timed

        for name in ("expand", "absorb", "decide", "settle", "advance", "commit", "give", "take"):
            if hasattr(self, name):
                setattr(self, name, wrap(name, getattr(self, name)))
        for name in ("expand_chunk", "check_invariants"):
            setattr(self.expander, name, wrap(name, getattr(self.expander, name)))
        c0 = time.process_time()
        try:
            orig_serve(self)
        finally:
            with open(os.path.join(out_dir, f"w{self.w}.json"), "w") as f:
                json.dump({"per_level": per_level, "totals": totals, "blocked": blocked[0],
                           "cpu": time.process_time() - c0}, f)

    P._Worker.serve = serve  # type: ignore[method-assign]
    if args.head is not None:
        P.HEAD_FRONTIER = args.head
    bounds = {k: int(v) for k, v in (kv.split("=") for kv in args.bounds.split(",") if kv)}
    machine = find_model(args.model).machine(bounds=bounds)
    options = ExploreOptions(strategy="parallel", workers=args.workers, symmetry=args.symmetry,
                             stop_at_first=False)
    load = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    result = P.explore_parallel(machine, options)
    wall, parent_cpu = time.perf_counter() - t, time.process_time() - c
    s = result.stats
    print(f"{args.model} {args.bounds} x{args.workers} symmetry={args.symmetry} head={P.HEAD_FRONTIER}: {s.distinct:,} distinct, "
          f"{s.generated:,} generated, depth {s.depth}; wall {wall:.2f} s (load {load:.1f}), parent CPU {parent_cpu:.2f} s")
    runs = []
    for w in range(args.workers):
        with open(os.path.join(out_dir, f"w{w}.json")) as f:
            runs.append(json.load(f))
    by_key: defaultdict[tuple[str, int], list[float]] = defaultdict(lambda: [0.0] * args.workers)
    for w, run in enumerate(runs):
        phases = " ".join(f"{k} {v:.2f}" for k, v in sorted(run["totals"].items()))
        print(f"  worker {w}: CPU {run['cpu']:.2f} s, blocked on its pipe {run['blocked']:.2f} s | {phases}")
        for name, level, spent in run["per_level"]:
            by_key[name, level][w] += spent
    loss: defaultdict[str, float] = defaultdict(float)
    for (name, _), spent in by_key.items():
        loss[name] += max(spent) - min(spent)
    simulated = sum(max(v) for v in by_key.values()) + parent_cpu
    print("  barrier loss (CPU s): " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(loss.items()))
          + f"; total {sum(loss.values()):.2f}")
    print(f"  simulated wall on idle cores: {simulated:.2f} s; workers' CPU {sum(r['cpu'] for r in runs):.2f} s")
    for note in result.notes:
        print("  " + note)
    for w in range(args.workers):
        os.unlink(os.path.join(out_dir, f"w{w}.json"))
    os.rmdir(out_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
