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

``--counts`` adds figures that do not depend on the machine's load at all (par14): per level and
worker the states expanded, the successors generated and the memo misses (``profile_eos.py``'s
instrumentation; the head's are counted in the parent), and a *modelled* run from them: a level
costs a worker ``--us-per-successor`` per successor generated plus ``--us-per-miss`` per memo miss
(defaults: the symmetric kafka.eos BFS's 8.0 s of non-miss CPU over its 2.71M successors and its
1.03 s of misses over 57,674 misses, on this machine in session 14), summed over the workers and
as the sum of each level's slowest worker (the barrier loss is their gap). The BFS's own figure
comes from the same instrumentation: ``--engine bfs``.

    python bench/profile_parallel.py --symmetry --counts
    python bench/profile_parallel.py --symmetry --counts --engine bfs
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from typing import Any


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="kafka.eos")
    parser.add_argument("--bounds", default="restarts=1,transactions=2,input_records=1,max_ticks=2")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--symmetry", action="store_true")
    parser.add_argument("--counts", action="store_true",
                        help="count states, successors and memo misses per level and worker (load-independent)")
    parser.add_argument("--engine", choices=("parallel", "bfs"), default="parallel",
                        help="with --counts: bfs gives the single-process run's counts and modelled cost")
    parser.add_argument("--us-per-successor", type=float, default=2.96)
    parser.add_argument("--us-per-miss", type=float, default=17.8)
    parser.add_argument("--head", type=int, default=None, metavar="STATES",
                        help="parallel.HEAD_FRONTIER: the parent expands levels itself below this many states "
                             "per worker (0: the workers start from the initial states)")
    parser.add_argument("--per-level", action="store_true",
                        help="with --counts: print each level's states, successors, memo misses and modelled cost per worker")
    parser.add_argument("--handover-block", type=int, default=None, metavar="STATES",
                        help="parallel.HANDOVER_BLOCK: the level the head hands over is dealt in blocks of this many states")
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
        counts: list[tuple[int, int, int, int]] = []  # (level, states, generated, memo misses) per expansion
        if args.counts:
            timed_expand = self.expand

            def counted_expand(level: int, *a: Any, **kw: Any) -> Any:
                states, before = len(self.frontier_pos), missed()
                reply = timed_expand(level, *a, **kw)
                counts.append((level, states, reply["generated"], missed() - before))
                return reply
            self.expand = counted_expand
        c0 = time.process_time()
        try:
            orig_serve(self)
        finally:
            with open(os.path.join(out_dir, f"w{self.w}.json"), "w") as f:
                json.dump({"per_level": per_level, "totals": totals, "blocked": blocked[0],
                           "cpu": time.process_time() - c0, "counts": counts}, f)

    P._Worker.serve = serve  # type: ignore[method-assign]
    if args.head is not None:
        P.HEAD_FRONTIER = args.head
    if args.handover_block is not None:
        P.HANDOVER_BLOCK = args.handover_block
    bounds = {k: int(v) for k, v in (kv.split("=") for kv in args.bounds.split(",") if kv)}
    machine = find_model(args.model).machine(bounds=bounds)
    misses: Counter[str] = Counter()

    def missed() -> int:  # memo misses (not the calls of within_bounds and canonical it also counts)
        return sum(n for what, n in misses.items() if not what.startswith("call "))

    def cost(generated: int, missed: int) -> float:
        return 1e-6 * (args.us_per_successor * generated + args.us_per_miss * missed)

    if args.counts:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from profile_eos import instrument
        misses, _ = instrument(machine, cpu=True)
        if args.engine == "bfs":
            from eoscheck.checker.explore import explore
            result = explore(machine, ExploreOptions(symmetry=args.symmetry, stop_at_first=False))
            st = result.stats
            print(f"{args.model} {args.bounds} bfs symmetry={args.symmetry}: {st.distinct:,} distinct, "
                  f"{st.generated:,} generated, depth {st.depth}; memo misses {missed():,}; "
                  f"modelled {cost(st.generated, missed()):.3f} s")
            os.rmdir(out_dir)
            return 0
        head: dict[str, int] = {}
        orig_run = P._Head.run

        def counted_run(self: Any, until: int) -> None:
            orig_run(self, until)
            head.update(misses=missed(), generated=self.base_generated + self.generated, level=self.level,
                        visited=len(self.visited), frontier=len(self.frontier))
        P._Head.run = counted_run  # type: ignore[method-assign]
    options = ExploreOptions(strategy="parallel", workers=args.workers, symmetry=args.symmetry,
                             stop_at_first=False)
    load = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    result = P.explore_parallel(machine, options)
    wall, parent_cpu = time.perf_counter() - t, time.process_time() - c
    s = result.stats
    print(f"{args.model} {args.bounds} x{args.workers} symmetry={args.symmetry} head={P.HEAD_FRONTIER} "
          f"block={P.HANDOVER_BLOCK}: {s.distinct:,} distinct, "
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
    if args.per_level:
        # each level's expansion (``advance`` runs the next level's), CPU seconds per worker
        print("  expansion CPU per level (s): " + ", ".join(
            f"{level + (1 if name == 'advance' else 0)}: " + "/".join(f"{x:.3f}" for x in spent)
            for (name, level), spent in sorted(by_key.items(), key=lambda kv: kv[0][1])
            if name in ("expand", "advance")))
    loss: defaultdict[str, float] = defaultdict(float)
    for (name, _), spent in by_key.items():
        loss[name] += max(spent) - min(spent)
    simulated = sum(max(v) for v in by_key.values()) + parent_cpu
    print("  barrier loss (CPU s): " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(loss.items()))
          + f"; total {sum(loss.values()):.2f}")
    print(f"  simulated wall on idle cores: {simulated:.2f} s; workers' CPU {sum(r['cpu'] for r in runs):.2f} s")
    if args.counts:
        rows: defaultdict[int, list[tuple[int, int, int]]] = defaultdict(lambda: [(0, 0, 0)] * args.workers)
        for w, run in enumerate(runs):
            for level, states, generated, missed_here in run["counts"]:
                rows[level][w] = (states, generated, missed_here)
        print(f"  head (parent): levels 1-{head['level'] - 1} expanded, {head['visited']:,} states, "
              f"{head['generated']:,} generated, {head['misses']:,} memo misses; level {head['level']} "
              f"({head['frontier']:,} states) handed over")
        for w in range(args.workers):
            print(f"  worker {w}: " + ", ".join(f"{sum(r[w][i] for r in rows.values()):,} {what}"
                                               for i, what in enumerate(("states", "generated", "memo misses"))))
        per = {level: [cost(g, m) for _, g, m in r] for level, r in rows.items()}
        total, slowest = sum(map(sum, per.values())), sum(map(max, per.values()))
        spread = [sum(max(x[i] for x in r) - min(x[i] for x in r) for r in rows.values()) for i in (1, 2)]
        if args.per_level:
            print("  level: per worker (states, generated, memo misses, modelled s); slower - faster (s)")
            for level in sorted(rows):
                r = rows[level]
                print(f"  {level:5d}: " + " | ".join(f"{st:7,} {g:8,} {m:6,} {c:.3f}" for (st, g, m), c in zip(r, per[level]))
                      + f"; {max(per[level]) - min(per[level]):.3f}")
        print(f"  modelled: head {cost(head['generated'], head['misses']):.3f} s, workers {total:.3f} s, "
              f"sum of each level's slowest worker {slowest:.3f} s (barrier loss {slowest * args.workers - total:.3f} s); "
              f"per-level spread between workers: {spread[0]:,} generated, {spread[1]:,} memo misses")
    for note in result.notes:
        print("  " + note)
    for w in range(args.workers):
        os.unlink(os.path.join(out_dir, f"w{w}.json"))
    os.rmdir(out_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
