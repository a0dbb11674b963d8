"""How fast the machine itself runs, sample after sample, in CPU time per fixed amount of work.

    python bench/machine_probe.py --minutes 30 --every 10 --jsonl /tmp/probe.jsonl

Each sample runs two fixed pieces of work at once, one process pinned to each core (as the two
workers of a parallel run are), and measures the CPU seconds each took:

* *compute*: a tight integer loop whose data fit in the first-level caches, so what else runs on
  the machine changes its CPU time only through what the core itself does (its clock, a sibling
  hardware thread on the host, time the hypervisor takes without reporting it as steal);
* *memory*: random reads over a 64 MiB array (numpy gathers), which the shared last-level cache
  and the memory bus also slow down.

A change of the compute figure between samples is a change of the machine's speed that no program
running in this guest can cause or see except as CPU seconds; the parallel engine's counts are the
same in every run (``bench/parallel_runs.py``), so its CPU seconds per worker follow these figures.
Also recorded per sample: steal and the busy share of each core (from /proc/stat) and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from multiprocessing import get_context
from typing import Any

COMPUTE_ITERATIONS = 400_000
MEMORY_READS = 2_000_000
MEMORY_BYTES = 64 << 20


def compute() -> float:
    t = time.thread_time()
    x = 1
    for _ in range(COMPUTE_ITERATIONS):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
    return time.thread_time() - t


def memory(table: Any, index: Any) -> float:
    import numpy as np
    t = time.thread_time()
    np.take(table, index).sum()
    return time.thread_time() - t


def one_core(cpu: int, start: float, conn: Any) -> None:
    import numpy as np
    os.sched_setaffinity(0, {cpu})
    rng = np.random.default_rng(cpu)
    table = np.ones(MEMORY_BYTES // 8, dtype=np.int64)
    index = rng.integers(0, table.size, MEMORY_READS)
    memory(table, index)  # fault the table in before the clock
    while time.time() < start:  # both cores start together
        time.sleep(0.001)
    conn.send({"cpu": cpu, "compute_s": compute(), "memory_s": memory(table, index)})
    conn.close()


def stat() -> list[list[int]]:
    with open("/proc/stat") as f:
        return [[int(x) for x in line.split()[1:]] for line in f if line.startswith("cpu")]


def sample() -> dict[str, Any]:
    ctx = get_context("fork")
    start = time.time() + 0.5
    s0, t0 = stat(), time.time()
    pipes, procs = [], []
    for cpu in range(min(2, os.cpu_count() or 1)):
        parent, child = ctx.Pipe()
        p = ctx.Process(target=one_core, args=(cpu, start, child))
        p.start()
        pipes.append(parent)
        procs.append(p)
    cores = [c.recv() for c in pipes]
    for p in procs:
        p.join()
    s1, t1 = stat(), time.time()
    hz = os.sysconf("SC_CLK_TCK")
    per_cpu = []
    for a, b in zip(s0[1:], s1[1:]):
        d = [y - x for x, y in zip(a, b)]
        busy = sum(d) - d[3] - d[4]
        per_cpu.append({"busy_share": busy / max(sum(d), 1), "steal_s": d[7] / hz})
    return {"t": t0, "wall_s": t1 - t0, "load": os.getloadavg()[0], "cores": cores, "per_cpu": per_cpu}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--every", type=float, default=10, help="seconds between samples")
    parser.add_argument("--jsonl", required=True)
    args = parser.parse_args()
    end = time.time() + 60 * args.minutes
    while time.time() < end:
        rec = sample()
        with open(args.jsonl, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print(time.strftime("%H:%M:%S", time.gmtime(rec["t"])), f"load {rec['load']:.1f}",
              " ".join(f"cpu{c['cpu']}: compute {c['compute_s'] * 1e3:.1f} ms memory {c['memory_s'] * 1e3:.1f} ms"
                       for c in rec["cores"]), flush=True)
        time.sleep(max(args.every - rec["wall_s"], 0))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
