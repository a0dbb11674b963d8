"""The parallel engine's parent, segment by segment, and each process's CPU (par24).

    python bench/parallel_parent_timeline.py --symmetry
    python bench/parallel_parent_timeline.py --symmetry --all      # every segment, even the tiny ones

One run of kafka.eos (``--bounds``, 2 workers). The engine's helpers (the head, the forks, the pipe
round trips, the trace rebuilds, the collision merge, ...) are wrapped from outside, and between
each pair of consecutive marks the parent's wall, CPU (user + system, ``getrusage``) and minor page
faults are summed, per pair of marks. The CPU and fault figures do not depend much on what else
the machine runs; wall does (on a shared machine read it for the order of events only). Each
worker's own ``getrusage`` (CPU from its fork, faults, peak RSS) is printed too.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing.context as mpc
import multiprocessing.process as mpp
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

Mark = tuple[str, float, float, int]


def _usage(who: int) -> dict[str, float]:
    r = resource.getrusage(who)
    return {"cpu": r.ru_utime + r.ru_stime, "user": r.ru_utime, "sys": r.ru_stime,
            "minflt": r.ru_minflt, "maxrss_kib": r.ru_maxrss}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bounds", default="restarts=1,transactions=2,input_records=1,max_ticks=2")
    parser.add_argument("--symmetry", action="store_true")
    parser.add_argument("--all", action="store_true", help="print segments under 1 ms of CPU too")
    args = parser.parse_args()
    from eoscheck.checker.explore import ExploreOptions, explore
    from eoscheck.checker.explore import parallel as P
    from eoscheck.checker.registry import find_model

    marks: list[Mark] = []

    def mark(name: str) -> None:
        r = resource.getrusage(resource.RUSAGE_SELF)
        marks.append((name, time.perf_counter(), r.ru_utime + r.ru_stime, r.ru_minflt))

    def wrap(owner: Any, attr: str, label: str | Callable[..., str]) -> None:
        orig = getattr(owner, attr)

        def wrapped(*a: Any, **k: Any) -> Any:
            name = label(*a) if callable(label) else label
            mark(name + ">")
            try:
                return orig(*a, **k)
            finally:
                mark(name + "<")
        setattr(owner, attr, wrapped)

    out = tempfile.mkdtemp(prefix="parent-timeline-")
    worker_main = P._worker_main

    def recording_worker(machine: Any, options: Any, setup: Any, conn: Any) -> None:
        try:
            worker_main(machine, options, setup, conn)
        finally:
            with open(os.path.join(out, f"w{setup.worker}.json"), "w") as f:
                json.dump(_usage(resource.RUSAGE_SELF), f)

    P._worker_main = recording_worker
    wrap(P, "explore_parallel", "explore_parallel")
    wrap(P._Head, "run", "head")
    wrap(P._Head, "release", "release")
    wrap(P, "_observed_collision", "collision")
    wrap(P, "_exchange_dir", "exchange_dir")
    wrap(P, "_handed_over", "handed_over")
    wrap(mpc.BaseContext, "Pipe", "Pipe")
    wrap(mpp.BaseProcess, "start", "fork")
    wrap(mpp.BaseProcess, "join", "join")
    wrap(P, "_ask_all", lambda conns, msg, *a: "send:" + msg[0])
    wrap(P, "_chain", "chain")
    wrap(P, "to_violation", "to_violation")
    wrap(P, "_finish", "result")
    machine = find_model("kafka.eos").machine(
        bounds={k: int(v) for k, v in (kv.split("=") for kv in args.bounds.split(","))})
    mark("start")
    r = explore(machine, ExploreOptions(strategy="parallel", workers=2, symmetry=args.symmetry, stop_at_first=False))
    mark("end")
    print(f"kafka.eos {args.bounds} symmetry={args.symmetry}: {r.stats.distinct:,} distinct, "
          f"{r.stats.generated:,} generated, depth {r.stats.depth}")
    segments: dict[str, list[float]] = {}
    for prev, cur in itertools.pairwise(marks):
        seg = segments.setdefault(f"{prev[0]} .. {cur[0]}", [0, 0.0, 0.0, 0])
        seg[0] += 1
        seg[1] += cur[1] - prev[1]
        seg[2] += cur[2] - prev[2]
        seg[3] += cur[3] - prev[3]
    print(f"  {'parent segment':44s} {'times':>5s} {'wall ms':>9s} {'CPU ms':>8s} {'minflt':>7s}")
    for name, (n, wall, cpu, flt) in segments.items():
        if args.all or cpu >= 1e-3:
            print(f"  {name:44s} {n:5d} {wall * 1e3:9.1f} {cpu * 1e3:8.1f} {flt:7d}")
    head = [m for m in marks if m[0] in ("head>", "head<")]
    total = marks[-1][2] - marks[0][2]
    print(f"  parent CPU {total:.3f} s (head {head[1][2] - head[0][2]:.3f} s, after it "
          f"{marks[-1][2] - head[1][2]:.3f} s); minor faults after the head {marks[-1][3] - head[1][3]}")
    for w in range(2):
        path = os.path.join(out, f"w{w}.json")
        if os.path.exists(path):
            with open(path) as f:
                u = json.load(f)
            print(f"  worker {w}: CPU {u['cpu']:.3f} s (user {u['user']:.3f}, sys {u['sys']:.3f}), "
                  f"minflt {u['minflt']}, peak RSS {u['maxrss_kib'] / 1024:.1f} MiB")
            os.unlink(path)
    os.rmdir(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
