"""kafka.eos interleaved A/B/..: one ``bench_eos.py`` plan entry run in turn by several
configurations, each an interpreter (a checkout's venv) plus environment settings, in rounds.

    python bench/bench_env_ab.py --plan PLAN --repeat 5 \\
        --config base=/work/venvs/base27/bin/python \\
        --config base-nothp=/work/venvs/base27/bin/python:NUMPY_MADVISE_HUGEPAGE=0 \\
        --config new=/work/venvs/perf27b/bin/python

A configuration is ``name=python[:VAR=value,...]``. Every run is a fresh subprocess that reports
distinct/generated counts, wall and CPU seconds of ``explore`` alone, the process's AnonHugePages
(``/proc/self/smaps``) at the end, and its peak RSS. Rounds rotate the order of the configurations so
that none always runs first after a pause. Prints one line per run, then per configuration the
median CPU time and each round's ratio to the first configuration (the noise is the spread of those
ratios), and writes them as markdown to ``--md`` if given.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

from bench_eos_ab import CHILD_RUN

HERE = Path(__file__).resolve().parent

CHILD = CHILD_RUN + """
import re, resource
try:
    with open("/proc/self/smaps") as f:
        huge = sum(int(x) for x in re.findall(r"^AnonHugePages:\\s+(\\d+)", f.read(), re.MULTILINE))
except OSError:
    huge = None
print(json.dumps({{"distinct": r.stats.distinct, "generated": r.stats.generated, "depth": r.stats.depth,
                  "wall": round(wall, 3), "cpu": round(cpu, 3), "huge_kb": huge,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10,
                  "minflt": resource.getrusage(resource.RUSAGE_SELF).ru_minflt}}))
"""


def parse_config(text: str) -> tuple[str, str, dict[str, str]]:
    name, eq, rest = text.partition("=")
    if not eq:
        raise SystemExit(f"bench_env_ab: --config {text!r}: expected name=python[:VAR=value,...]")
    python, _, settings = rest.partition(":")
    env = dict(kv.split("=", 1) for kv in settings.split(",") if kv)
    return name, python, env


def run(python: str, env: dict[str, str], plan: str, max_states: int | None) -> dict[str, object]:
    child = CHILD.format(bench=str(HERE), plan=plan, max_states=max_states)
    load = os.getloadavg()[0]
    out = subprocess.run([python, "-c", child], check=True, capture_output=True, text=True, cwd="/tmp",
                         env={**os.environ, "PYTHONHASHSEED": "0", **env}).stdout
    rec = json.loads(out)
    rec.update(load=round(load, 2), utc=time.strftime("%H:%M:%S", time.gmtime()))
    return rec


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", required=True, help="a bench_eos.py plan entry")
    parser.add_argument("--config", action="append", required=True, help="name=python[:VAR=value,...]")
    parser.add_argument("--repeat", type=int, default=5, help="rounds")
    parser.add_argument("--max-states", type=int, default=None)
    parser.add_argument("--md", help="write the table here")
    args = parser.parse_args()
    configs = [parse_config(c) for c in args.config]
    runs: dict[str, list[dict[str, object]]] = {name: [] for name, _, _ in configs}
    for r in range(args.repeat):
        k = r % len(configs)
        for name, python, env in configs[k:] + configs[:k]:
            rec = run(python, env, args.plan, args.max_states)
            runs[name].append(rec)
            print(r, name, json.dumps(rec), flush=True)
    first = configs[0][0]
    counts = {(x["distinct"], x["generated"], x["depth"]) for rs in runs.values() for x in rs}
    lines = [f"`{args.plan}`, {args.repeat} rounds, counts equal: {'yes' if len(counts) == 1 else 'NO ' + str(counts)}",
             "",
             (f"| configuration | median CPU s | min CPU s | median wall s | AnonHugePages kB at exit | peak RSS MB "
              f"| minor faults "
              f"| CPU ratio to {first} per round | median ratio |"),
             "|---|---:|---:|---:|---:|---:|---:|---|---:|"]
    for name, _, _ in configs:
        rs = runs[name]
        ratios = [float(a["cpu"]) / float(b["cpu"]) for a, b in zip(rs, runs[first])]  # type: ignore[arg-type]
        lines.append(f"| {name} | {statistics.median(float(x['cpu']) for x in rs):.2f} "  # type: ignore[arg-type]
                     f"| {min(float(x['cpu']) for x in rs):.2f} "  # type: ignore[arg-type]
                     f"| {statistics.median(float(x['wall']) for x in rs):.2f} "  # type: ignore[arg-type]
                     f"| {'/'.join(str(x['huge_kb']) for x in rs)} | {max(int(x['maxrss_mb']) for x in rs)} "  # type: ignore[call-overload]
                     f"| {statistics.median(int(x.get('minflt', 0)) for x in rs):,.0f} "  # type: ignore[call-overload]
                     f"| {', '.join(f'{q:.3f}' for q in ratios)} | {statistics.median(ratios):.3f} |")
    print("\n".join(lines))
    if args.md:
        Path(args.md).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
