"""The same parallel run many times: what varies between runs, worker by worker.

    python bench/parallel_runs.py --runs 12 --symmetry                 # kafka.eos config 1, 2 workers
    python bench/parallel_runs.py --runs 6 --symmetry --seeds 0,1,2    # fixed PYTHONHASHSEED per run

Each run is a fresh process (its own hash seed unless ``--seeds``, its own address-space layout).
Per worker it records what the engine did (states expanded, successors generated, candidates sent
to the other owner, states kept, moved in and out, pipe commands) and what that cost the machine
(user and system CPU, minor page faults, context switches, scheduler migrations, time spent
runnable but waiting for a core, seconds blocked on the parent's pipe); per run the wall-clock, the
parent's CPU and the machine's /proc/stat deltas (steal, idle). The counts are load-independent: if
they are equal in every run, a run that took longer executed the same work more slowly.

One JSON line per run goes to ``--jsonl``; the table at the end has one row per run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Any

CHILD = r"""
import json, os, resource, sys, time
from eoscheck.checker.explore import ExploreOptions
from eoscheck.checker.explore import parallel as P
from eoscheck.checker.registry import find_model

out_dir, model, bounds_text, workers, symmetry = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "1"

def sched() -> dict:
    out = {}
    try:
        with open("/proc/self/schedstat") as f:
            run_ns, wait_ns, slices = (int(x) for x in f.read().split())
        out.update(run_s=run_ns / 1e9, runqueue_wait_s=wait_ns / 1e9, timeslices=slices)
        with open("/proc/self/sched") as f:
            for line in f:
                if line.startswith("se.nr_migrations"):
                    out["migrations"] = int(line.split(":")[1])
    except OSError:
        pass
    return out

orig_serve = P._Worker.serve

def serve(self) -> None:
    c = {"expanded": 0, "generated": 0, "candidates": 0, "sent": 0, "kept": 0, "given": 0, "taken": 0,
         "commands": 0, "blocked_s": 0.0, "take_wait_s": 0.0}
    recv = self.conn.recv
    def timed_recv():
        t = time.perf_counter()
        try:
            return recv()
        finally:
            c["blocked_s"] += time.perf_counter() - t
            c["commands"] += 1
    self.conn.recv = timed_recv
    expand = self.expand
    def counted_expand(level, *a, **kw):
        c["expanded"] += len(self.frontier_pos)
        reply = expand(level, *a, **kw)
        c["generated"] += reply["generated"]
        c["candidates"] += int(self.cand_fps.size)
        c["sent"] += sum(int(ix.size) for d, ix in enumerate(self.by_owner) if d != self.w)
        return reply
    self.expand = counted_expand
    commit = self.commit
    def counted_commit(gives, *a, **kw):
        c["given"] += sum(n for _, n in gives)
        reply = commit(gives, *a, **kw)
        c["kept"] += reply["new"]
        return reply
    self.commit = counted_commit
    take = self.take
    def counted_take(sources):
        before, t = len(self.frontier_pos), time.perf_counter()
        take(sources)
        c["taken"] += len(self.frontier_pos) - before
        c["take_wait_s"] += time.perf_counter() - t
    self.take = counted_take
    try:
        orig_serve(self)
    finally:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        c.update(user_s=ru.ru_utime, sys_s=ru.ru_stime, minflt=ru.ru_minflt, majflt=ru.ru_majflt,
                 nvcsw=ru.ru_nvcsw, nivcsw=ru.ru_nivcsw, maxrss_kb=ru.ru_maxrss, owned=len(self.visited),
                 **sched())
        with open(os.path.join(out_dir, f"w{self.w}.json"), "w") as f:
            json.dump(c, f)

P._Worker.serve = serve

def stat() -> list[int]:
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]]

bounds = {k: int(v) for k, v in (kv.split("=") for kv in bounds_text.split(",") if kv)}
machine = find_model(model).machine(bounds=bounds)
options = ExploreOptions(strategy="parallel", workers=workers, symmetry=symmetry, stop_at_first=False)
s0, load, t, cpu = stat(), os.getloadavg()[0], time.perf_counter(), time.process_time()
result = P.explore_parallel(machine, options)
wall, parent_cpu, s1 = time.perf_counter() - t, time.process_time() - cpu, stat()
names = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"]
delta = {n: (b - a) / os.sysconf("SC_CLK_TCK") for n, a, b in zip(names, s0, s1)}
st = result.stats
print(json.dumps({"wall_s": wall, "parent_cpu_s": parent_cpu, "load": load, "machine_s": delta,
                  "distinct": st.distinct, "generated": st.generated, "depth": st.depth,
                  "hashseed": os.environ.get("PYTHONHASHSEED"), "parent": sched(),
                  "notes": result.notes}))
"""


def run_once(python: str, model: str, bounds: str, workers: int, symmetry: bool, seed: str | None) -> dict[str, Any]:
    out_dir = tempfile.mkdtemp(prefix="parallel-runs-")
    env = dict(os.environ)
    env.pop("PYTHONHASHSEED", None)
    if seed is not None:
        env["PYTHONHASHSEED"] = seed
    proc = subprocess.run([python, "-c", CHILD, out_dir, model, bounds, str(workers), "1" if symmetry else "0"],
                          env=env, capture_output=True, text=True, check=True)
    rec = json.loads(proc.stdout.strip().splitlines()[-1])
    rec["workers"] = []
    for w in range(workers):
        path = os.path.join(out_dir, f"w{w}.json")
        with open(path) as f:
            rec["workers"].append(json.load(f))
        os.unlink(path)
    os.rmdir(out_dir)
    return rec


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="kafka.eos")
    parser.add_argument("--bounds", default="restarts=1,transactions=2,input_records=1,max_ticks=2")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--symmetry", action="store_true")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seeds", default=None, help="comma-separated PYTHONHASHSEED per run (default: random)")
    parser.add_argument("--jsonl", default=None, help="append one JSON line per run here")
    args = parser.parse_args()
    seeds = args.seeds.split(",") if args.seeds else [None] * args.runs
    keys = ("expanded", "generated", "candidates", "sent", "kept", "given", "taken", "owned", "commands")
    print("| run | seed | wall s | load | steal s | parent CPU s | worker | user s | sys s | runqueue wait s | "
          "migr | nivcsw | minflt | blocked s | " + " | ".join(keys) + " |")
    print("|" + "---|" * (14 + len(keys)))
    for i, seed in enumerate(seeds):
        rec = run_once(sys.executable, args.model, args.bounds, args.workers, args.symmetry, seed)
        rec.update(run=i, symmetry=args.symmetry, model=args.model, bounds=args.bounds)
        if args.jsonl:
            with open(args.jsonl, "a") as f:
                f.write(json.dumps(rec) + "\n")
        for w, c in enumerate(rec["workers"]):
            head = (f"| {i} | {seed or 'random'} | {rec['wall_s']:.2f} | {rec['load']:.1f} | "
                    f"{rec['machine_s'].get('steal', 0):.2f} | {rec['parent_cpu_s']:.2f}") if w == 0 else "| | | | | |"
            print(f"{head} | {w} | {c['user_s']:.2f} | {c['sys_s']:.2f} | {c.get('runqueue_wait_s', 0):.2f} | "
                  f"{c.get('migrations', '')} | {c['nivcsw']} | {c['minflt']:,} | {c['blocked_s']:.2f} | "
                  + " | ".join(f"{c[k]:,}" for k in keys) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
