"""One configuration of ``bench_scale.py`` in a quiet window carved out of a busy machine, with and
without other processes sharing the cores (par18: why a 2-worker run is sometimes much slower).

    python bench/intruder.py --engine parallel --symmetry --intruders 0,1 --repeat 2

The script (root, Linux) puts itself under SCHED_RR: the run and everything it forks then take the
cores from every ordinary process, which is what an idle machine would give it. An *intruder* is a
busy process at the same priority (``--kind compute``: a tight loop; ``memory``: random reads over
64 MiB), started just before the run and stopped right after it: another program that happens to
run during the measurement. Per run: wall-clock, the parent's CPU, each worker's CPU (and its time
runnable but waiting for a core), and what the rest of the machine got (``bench_scale.run_one``).

Real-time priority starves the machine's other processes while a run lasts (the kernel keeps 5%
for them): keep runs short (kafka.eos config 1: 4-8 s each).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from multiprocessing import get_context
from pathlib import Path

HERE = Path(__file__).resolve().parent
BOUNDS = {"restarts": 1, "transactions": 2, "input_records": 1, "max_ticks": 2}


def busy(kind: str, seconds: float) -> None:
    end = time.time() + seconds
    if kind == "memory":
        import numpy as np
        table = np.ones((64 << 20) // 8, dtype=np.int64)
        index = np.random.default_rng(0).integers(0, table.size, 1 << 20)
        while time.time() < end:
            np.take(table, index).sum()
    else:
        x = 1
        while time.time() < end:
            for _ in range(10_000):
                x = (x * 1103515245 + 12345) & 0x7FFFFFFF


def one(config: dict, intruders: int, kind: str, timeout: float) -> dict:
    ctx = get_context("fork")
    procs = [ctx.Process(target=busy, args=(kind, timeout), daemon=True) for _ in range(intruders)]
    for p in procs:
        p.start()
    try:
        out = subprocess.run([sys.executable, str(HERE / "bench_scale.py"), "--run-json", json.dumps(config)],
                             capture_output=True, text=True, timeout=timeout, check=True)
    finally:
        for p in procs:  # only the intruders this run started
            p.terminate()
            p.join()
    return json.loads(out.stdout.strip().splitlines()[-1])


def probe() -> list[float]:
    """machine_probe's fixed compute loop, one process per core at once: ms of CPU per core."""
    sys.path.insert(0, str(HERE))
    from machine_probe import sample
    return [round(c["compute_s"] * 1e3, 1) for c in sorted(sample()["cores"], key=lambda c: c["cpu"])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine", default="parallel", help="bfs, parallel (--workers)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--symmetry", action="store_true")
    parser.add_argument("--intruders", default="0,1", help="comma-separated counts, run in turn")
    parser.add_argument("--kind", choices=("compute", "memory"), default="compute")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--jsonl", default=None)
    parser.add_argument("--probe", action="store_true",
                        help="before and after each run, time machine_probe's fixed loop on both cores")
    args = parser.parse_args()
    os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(1))
    config = {"model": "kafka.eos", "bounds": BOUNDS, "engine": args.engine, "symmetry": args.symmetry,
              "workers": args.workers}
    for _ in range(args.repeat):
        for n in (int(x) for x in args.intruders.split(",")):
            before = probe() if args.probe else None
            r = one(config, n, args.kind, args.timeout)
            after = probe() if args.probe else None
            r.update(intruders=n, kind=args.kind, probe_before=before, probe_after=after, **config)
            if args.jsonl:
                with open(args.jsonl, "a") as f:
                    f.write(json.dumps(r) + "\n")
            workers = "/".join(f"{w['cpu']:.2f}" for w in r.get("workers_cpu") or [])
            waits = "/".join(f"{w['runqueue_wait']:.2f}" for w in r.get("workers_cpu") or [])
            waits += " on cores " + "/".join(str(w.get("core")) for w in r.get("workers_cpu") or [])
            print(f"{args.engine} x{args.workers if args.engine == 'parallel' else 1} sym={args.symmetry} "
                  f"intruders={n} ({args.kind}): {r['distinct']:,} states, wall {r['elapsed']:.2f} s, "
                  f"parent CPU {r['cpu_self']:.2f} s, workers' CPU {workers or '-'} s (waiting {waits or '-'} s), "
                  f"children CPU {r['cpu_children']:.2f} s, others {r['machine_others_cpu']:.2f} s, "
                  f"steal {r['machine_steal']:.2f} s"
                  + (f"; probe ms before {before} after {after}" if args.probe else ""), flush=True)
            time.sleep(5)  # the machine's other processes get their turn between runs
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
