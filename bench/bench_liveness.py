"""Liveness benchmark: the cost of a temporal check against the safety run on the same space.

Per configuration, two fresh processes: the safety BFS (``explore``, the spec's safety properties)
and the liveness check alone (``check_liveness``: its graph-recording BFS over the expansion core, then the SCC search
and, for a violation, the lasso). Each records wall and CPU seconds and peak RSS
(``ru_maxrss``); the liveness run also reports the graph's own arrays in bytes per state (from its
note). ``net_rss_per_state`` subtracts the peak measured after imports and model construction.
The ratio the issue bounds (3x at a million states) is liveness / safety, quoted for CPU time,
which the other jobs on a shared machine disturb less than wall time. One JSON line per run is
appended to ``bench/results/liveness.jsonl`` and a table is written to
``bench/results/liveness.md``.

    python bench/bench_liveness.py                      # the configurations below
    python bench/bench_liveness.py --only eos-beta-kip447-records2
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parents[1]

#: name -> (spec file or model, bounds, temporal properties, symmetry)
CONFIGS: dict[str, dict] = {
    "eos-beta-kip447-records2": {"spec": "specs/liveness-eos-beta-kip447.toml",
                                 "temporal": ["TransactionsComplete", "MarkersComplete", "RebalanceSettles"]},
    "epoch-overflow-large": {"spec": "specs/large/epoch-overflow-large.toml",
                             "temporal": ["InitEventuallyCompletes"]},
    "idempotent-clients2-records5": {"model": "kafka.idempotent_produce", "variant": "kafka-shipped",
                                     "bounds": {"clients": 2, "records": 5}, "symmetry": False,
                                     "temporal": ["SendsEventuallyComplete"]},
}

CHILD = r"""
import gc, json, re, resource, sys, time
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.liveness import check_liveness
from eoscheck.checker.registry import find_model
from eoscheck.checker.spec import build_machine, load_spec, spec_to_options

cfg, what = json.loads(sys.argv[1]), sys.argv[2]
if "spec" in cfg:
    spec = load_spec(cfg["spec"])
    machine = build_machine(spec)
    options = spec_to_options(spec)
else:
    machine = find_model(cfg["model"]).machine(cfg["variant"], bounds=cfg["bounds"])
    options = ExploreOptions(symmetry=cfg.get("symmetry", True), check_deadlock=False)
safety = tuple(n for n in (options.properties or tuple(machine.properties())))
base_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start, cpu_start = time.perf_counter(), time.process_time()
if what == "safety":
    from dataclasses import replace
    result = explore(machine, replace(options, properties=safety, temporal=()))
    graph_bytes = None
else:
    gc.disable()  # as explore() does for the engines: the run makes no reference cycles
    result = check_liveness(machine, cfg["temporal"], symmetry=options.symmetry)
    graph_bytes = float(re.search(r"([0-9.]+) bytes per state", result.notes[0]).group(1))
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"verdict": result.verdict, "distinct": result.stats.distinct,
                  "generated": result.stats.generated, "elapsed": elapsed, "cpu": cpu,
                  "base_rss": base_kb * 1024, "peak_rss": peak_kb * 1024, "graph_bytes_per_state": graph_bytes,
                  "violations": [v.property for v in result.violations],
                  "note": result.notes[0] if result.notes else ""}))
"""


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=REPO, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run_once(cfg: dict, what: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cfg), what], capture_output=True,
                          text=True, check=True, cwd=REPO)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def table(rows: list[dict]) -> str:
    header = ("| configuration | distinct | safety wall / cpu | liveness wall / cpu | ratio wall / cpu | "
              "liveness verdict | graph bytes/state | peak RSS safety / liveness (net bytes/state) |")
    lines = [header, "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        s, v = r["safety"], r["liveness"]
        net = [(x["peak_rss"] - x["base_rss"]) / max(x["distinct"], 1) for x in (s, v)]
        lines.append(
            f"| {r['name']} | {v['distinct']:,} | {s['elapsed']:.1f} s / {s['cpu']:.1f} s | "
            f"{v['elapsed']:.1f} s / {v['cpu']:.1f} s | {v['elapsed'] / s['elapsed']:.2f}x / "
            f"{v['cpu'] / s['cpu']:.2f}x | {v['verdict']} | {v['graph_bytes_per_state']:.1f} | "
            f"{s['peak_rss'] / 2**20:.0f} MB / {v['peak_rss'] / 2**20:.0f} MB ({net[0]:.0f} / {net[1]:.0f}) |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=list(CONFIGS), help="run only these configurations")
    args = parser.parse_args()
    names = args.only or list(CONFIGS)
    RESULTS.mkdir(exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    rows = []
    for name in names:
        cfg = CONFIGS[name]
        row = {"name": name, "when": stamp, "commit": git_commit(), "python": platform.python_version(),
               "config": cfg, "safety": run_once(cfg, "safety"), "liveness": run_once(cfg, "liveness")}
        rows.append(row)
        with (RESULTS / "liveness.jsonl").open("a") as out:
            out.write(json.dumps(row) + "\n")
        print(table([row]), end="", flush=True)
    text = (f"# Liveness benchmark ({stamp}, commit {rows[0]['commit'] if rows else '?'})\n\n"
            "Same machine, shared with other jobs: CPU time is the steadier figure.\n\n" + table(rows))
    (RESULTS / "liveness.md").write_text(text)


if __name__ == "__main__":
    main()
