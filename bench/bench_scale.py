"""Scale benchmark: single-process BFS vs parallel (vs Spark) on the same models, with and without
symmetry, at several sizes, each configuration in a fresh subprocess.

    python bench/bench_scale.py                  # the default plan (10-20 minutes)
    python bench/bench_scale.py --quick          # small sizes only, for a smoke test
    python bench/bench_scale.py --plan twophase:7,8 --plan kafka.idempotent_produce:clients=2,records=3
    python bench/bench_scale.py --store 1000000 5000000   # compact store bytes/state only

Per configuration it records distinct and generated states per second, peak RSS (this process
plus, for the parallel engine, its workers) per distinct state, the speedup over the BFS in the
same run, the reduction factor of symmetry and its cost per generated state. Records are
appended to ``bench/results/scale.jsonl`` (``--out``); a markdown table is printed and written
next to it as ``scale.md``.

Figures are wall-clock on whatever else the machine is doing: each record carries the load
average before and after, the CPU seconds the rest of the machine used during the run ("others")
and the steal the hypervisor reported, and for the parallel engine each worker's CPU seconds; every
ratio in the table compares configurations of the same run. A run's counts and instructions are the
same every time (par18, ``bench/parallel_runs.py``), so a run slower than its repeats ran the same
work on a slower or busier machine: rerun it (``--repeat`` keeps the median).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

#: model aliases for --plan
ALIASES = {"twophase": ("examples.twophase-sym", "rms")}

TARGETS = {"single_core_states_per_s": 100_000, "bytes_per_state": 32, "symmetry_cost": 2.0,
           "speedup_2_cores": 1.7}


# ---------------------------------------------------------------- child side: one configuration

def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def run_one(config: dict[str, Any]) -> dict[str, Any]:
    """Run one exploration in this (fresh) process and measure it."""
    from eoscheck.checker.explore import ExploreOptions, explore
    from eoscheck.checker.registry import find_model

    machine = find_model(config["model"]).machine(variant=config.get("variant"),
                                                  bounds=config["bounds"])
    options = ExploreOptions(strategy=config["engine"], symmetry=config["symmetry"],
                             workers=config.get("workers", 2), stop_at_first=False,
                             max_seconds=config.get("max_seconds"),
                             properties=tuple(config["properties"]) if config.get("properties") else None)
    # Import the engines before the clock starts: their import is not exploration time.
    import eoscheck.checker.explore.bfs
    import eoscheck.checker.explore.parallel
    if config["engine"] == "spark":
        import eoscheck.checker.explore.spark  # noqa: F401
    worker_dir = _record_workers() if config["engine"] == "parallel" else None
    baseline = _rss_bytes()
    load_before = os.getloadavg()[0]
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    stat0 = _proc_stat()
    t0 = time.perf_counter()
    try:
        result = explore(machine, options)
    finally:
        if worker_dir is not None:
            _stop_recording_workers()
    elapsed = time.perf_counter() - t0
    stat1 = _proc_stat()
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_self = cpu1.ru_maxrss * 1024
    # The parallel engine reports what its workers added to the image they were forked with;
    # summing the workers' RSS would count pages shared with this process twice. Spark's JVM is
    # a child process: ru_maxrss of RUSAGE_CHILDREN is its peak (its own Python workers aside).
    added = [int(m.group(1).replace(",", "")) for n in result.notes
             if (m := re.search(r"peak RAM above their forked image: ([\d,]+) bytes", n))]
    peak_children = added[0] if added else kids.ru_maxrss * 1024
    s = result.stats
    cpu_self = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    cpu_children = kids.ru_utime + kids.ru_stime
    # what the machine did besides this run, in the run's own seconds: a disturbed run shows here
    # (a run's counts and instructions are the same every time, par18: only the machine varies)
    hz = os.sysconf("SC_CLK_TCK")
    delta = [(b - a) / hz for a, b in zip(stat0, stat1)]
    busy = sum(delta[:3]) + sum(delta[5:7])  # user, nice, system, irq, softirq
    return {
        "machine_others_cpu": max(busy - cpu_self - cpu_children, 0.0), "machine_steal": delta[7],
        "workers_cpu": _read_workers(worker_dir),
        "verdict": result.verdict, "limit_hit": result.limit_hit,
        "distinct": s.distinct, "generated": s.generated, "depth": s.depth,
        "elapsed": elapsed,
        "cpu_self": cpu_self,
        "cpu_children": cpu_children,
        "baseline_rss": baseline, "peak_rss_self": peak_self, "peak_rss_children": peak_children,
        "peak_rss": peak_self + peak_children,
        "load_before": load_before, "load_after": os.getloadavg()[0],
        "violations": {v.property: v.length for v in result.violations},
        "notes": result.notes,
    }


def _proc_stat() -> list[int]:
    """The machine's CPU time so far, all cores (user nice system idle iowait irq softirq steal)."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:9]]


def _record_workers() -> str:
    """Have each parallel worker write its own CPU seconds and its time runnable but waiting for a
    core (``/proc/self/schedstat``) when it ends: RUSAGE_CHILDREN sums the workers, and a run where
    one core ran slower than the other looks like one where both did. Costs one write per worker."""
    import tempfile

    from eoscheck.checker.explore import parallel as P

    out = tempfile.mkdtemp(prefix="bench-scale-workers-")
    serve = P._Worker.serve

    def recorded(self: Any) -> None:
        try:
            serve(self)
        finally:
            ru = resource.getrusage(resource.RUSAGE_SELF)
            wait = core = None
            try:
                with open("/proc/self/schedstat") as f:
                    wait = int(f.read().split()[1]) / 1e9
                with open("/proc/self/stat") as f:  # the core it ran on last (field 39)
                    core = int(f.read().rsplit(")", 1)[1].split()[36])
            except (OSError, IndexError, ValueError):
                pass
            with open(os.path.join(out, f"w{self.w}.json"), "w") as f:
                json.dump({"cpu": ru.ru_utime + ru.ru_stime, "runqueue_wait": wait, "core": core,
                           "switches": ru.ru_nvcsw + ru.ru_nivcsw}, f)

    _RECORDING.append(serve)
    P._Worker.serve = recorded  # type: ignore[method-assign]
    return out


#: the engine's own ``_Worker.serve`` while ``_record_workers`` has replaced it
_RECORDING: list[Any] = []


def _stop_recording_workers() -> None:
    from eoscheck.checker.explore import parallel as P

    P._Worker.serve = _RECORDING.pop()  # type: ignore[method-assign]


def _read_workers(out: str | None) -> list[dict[str, Any]] | None:
    if out is None:
        return None
    rows = []
    for name in sorted(os.listdir(out), key=lambda n: int(n[1:-5])):
        path = os.path.join(out, name)
        with open(path) as f:
            rows.append(json.load(f))
        os.unlink(path)
    os.rmdir(out)
    return rows


def symcost_one(config: dict[str, Any], sample_size: int = 200_000) -> dict[str, Any]:
    """Symmetry's cost per generated state, measured where the reduced run is too small to time:
    the engine does ``hash(canonical(s))`` instead of ``hash(s)`` for every generated state, so
    the cost ratio is (base + extra) / base, with base the unreduced BFS's CPU time per generated
    state and extra the difference of the two hashes over successors sampled from that run."""
    from eoscheck.checker.explore import ExploreOptions, explore
    from eoscheck.checker.registry import find_model

    machine = find_model(config["model"]).machine(variant=config.get("variant"), bounds=config["bounds"])
    import eoscheck.checker.explore.bfs  # noqa: F401
    c0 = time.process_time()
    # A time-capped run is enough for a per-state cost; the full run is timed elsewhere.
    result = explore(machine, ExploreOptions(symmetry=False, stop_at_first=False, max_seconds=20))
    base = (time.process_time() - c0) / result.stats.generated
    sample: list[Any] = []
    frontier = list(machine.init_states())
    seen = set(frontier)
    while frontier and len(sample) < sample_size:
        nxt = []
        for state in frontier:
            for _step, succ in machine.successors(state):
                sample.append(succ)
                if succ not in seen:
                    seen.add(succ)
                    nxt.append(succ)
        frontier = nxt
    sample = sample[:sample_size]
    canonical = machine.canonical

    def per_state(fn: Any) -> float:
        t = time.process_time()
        for state in sample:
            fn(state)
        return (time.process_time() - t) / len(sample)

    plain = per_state(hash)
    reduced = per_state(lambda st: hash(canonical(st)))
    return {"base_cpu_per_generated": base, "canonical_extra": reduced - plain,
            "cost_ratio": (base + reduced - plain) / base, "sample": len(sample),
            "generated": result.stats.generated}


def store_one(states: int, level_size: int = 50_000, spill: bool = False) -> dict[str, Any]:
    """Bytes per state of the compact visited set + parent store alone, filled level by level
    with random fingerprints (tracemalloc sees numpy's buffers; RSS is measured too)."""
    import tracemalloc

    import numpy as np
    from eoscheck.checker.explore.compact import FingerprintSet, ParentStore

    rng = np.random.default_rng(0)
    rss0 = _rss_bytes()
    tracemalloc.start()
    visited = FingerprintSet()
    parents = ParentStore(spill_bytes=0 if spill else None)
    prev_start, prev_count = 0, 0
    t0 = time.perf_counter()
    done = 0
    while done < states:
        n = min(level_size, states - done)
        fps = rng.integers(1, 2**64 - 1, size=n, dtype=np.uint64)
        new = visited.add_batch(fps)
        fps = fps[new]
        par = (rng.integers(prev_start, prev_start + prev_count, size=fps.size) if prev_count
               else np.full(fps.size, -1))
        prev_start, prev_count = parents.append_level(fps, par), fps.size
        done += fps.size
    elapsed = time.perf_counter() - t0
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # a trace-length chain lookup, to show the spilled store still answers
    chain = parents.chain(len(parents) - 1)
    parents.close()
    return {"states": len(visited), "visited_bytes": visited.nbytes, "parent_bytes": parents.nbytes,
            "traced_current": current, "traced_peak": peak, "rss_delta": _rss_bytes() - rss0,
            "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "chain_length": len(chain), "spill": spill, "elapsed": elapsed,
            "capacity": visited.capacity}


# ---------------------------------------------------------------- parent side: the plan

def cpu_idle_fraction(seconds: float = 1.0) -> float:
    """Share of all cores' time spent idle over the next ``seconds`` (from /proc/stat)."""
    def sample() -> tuple[int, int]:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        return fields[3] + fields[4], sum(fields)  # idle + iowait, total
    idle0, total0 = sample()
    time.sleep(seconds)
    idle1, total1 = sample()
    return (idle1 - idle0) / max(total1 - total0, 1)


def wait_for_idle(max_wait: float, threshold: float = 0.9) -> float:
    """Wait (up to ``max_wait`` s) until the machine is idle; returns the idle share seen last.

    The machine's scheduler groups processes by session (autogroup): while other sessions run,
    a session gets its fair share however many processes it has, so a 2-process run cannot show
    its speedup. Waiting for a quiet moment is the only honest wall-clock comparison there."""
    deadline = time.monotonic() + max_wait
    idle = cpu_idle_fraction()
    while idle < threshold and time.monotonic() < deadline:
        time.sleep(2)
        idle = cpu_idle_fraction()
    return idle


def _child(kind: str, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), f"--{kind}-json", json.dumps(payload)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def parse_plan(text: str) -> list[tuple[str, dict[str, int]]]:
    """``twophase:7,8`` or ``kafka.idempotent_produce:clients=2,records=3`` (one size)."""
    name, _, rest = text.partition(":")
    if name in ALIASES:
        model, bound = ALIASES[name]
        return [(model, {bound: int(v)}) for v in rest.split(",") if v]
    bounds = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        bounds[key] = int(value)
    return [(name, bounds)]


def default_plan(quick: bool) -> list[tuple[str, dict[str, int]]]:
    from eoscheck.checker.registry import installed_models

    plan: list[tuple[str, dict[str, int]]] = []
    models = installed_models()
    kafka = [n for n in models if n.startswith("kafka.idempotent")]
    if kafka:
        # records=5 is about a million states: the size the issue's single-core target names
        sizes = ([{"clients": 2, "records": 2}] if quick else
                 [{"clients": 2, "records": 3}, {"clients": 2, "records": 5}])
        plan += [(kafka[0], b) for b in sizes]
    plan += [("examples.twophase-sym", {"rms": r}) for r in ((5, 6) if quick else (7, 8))]
    return plan


def has_symmetry(model: str, bounds: dict[str, int]) -> bool:
    from eoscheck.checker.registry import find_model

    return find_model(model).machine(bounds=bounds).has_symmetry()


def spark_available() -> bool:
    try:
        import eoscheck.checker.explore.spark  # noqa: F401
        import pyspark  # noqa: F401
    except Exception:  # noqa: BLE001 - whatever stops the import, the benchmark skips Spark
        return False
    return True


def bench(plan: list[tuple[str, dict[str, int]]], engines: list[str], spark_max: int,
          timeout: float, workers: int, repeat: int, wait_idle: float = 0,
          partial: Path | None = None) -> list[dict[str, Any]]:
    """Run the plan; each finished record is also appended to ``partial`` (if given), so an
    interrupted run can still be tabulated with ``--from-partial``."""
    records: list[dict[str, Any]] = []
    run_id = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for model, bounds in plan:
        sym_options = [False, True] if has_symmetry(model, bounds) else [False]
        full_distinct: int | None = None
        cost = _child("symcost", {"model": model, "bounds": bounds}, timeout) if True in sym_options else None
        for symmetry in sym_options:
            # The repeats go round the engines (bfs, parallel:1, parallel, bfs, ...), not one engine's
            # runs in a row: this host's cores change speed for minutes at a time (``machine_probe.py``),
            # and a phase change between two engines' blocks moved the ratios by 10-15% (session 23)
            configs: list[dict[str, Any]] = []
            runs: dict[int, list[dict[str, Any]]] = {}
            for round_ in range(repeat):
                for spec in engines:
                    # "parallel:1" runs the parallel engine with one worker: its scaling baseline
                    engine, _, count = spec.partition(":")
                    # Spark pays seconds per level: only at the sizes where a comparison is affordable
                    if engine == "spark" and full_distinct is not None and full_distinct > spark_max:
                        continue
                    config = {"model": model, "bounds": bounds, "engine": engine, "symmetry": symmetry,
                              "workers": int(count) if count else workers}
                    if config not in configs:
                        configs.append(config)
                    idle = wait_for_idle(wait_idle) if wait_idle else None
                    got = {**_child("run", config, timeout), "idle_before": idle}
                    runs.setdefault(configs.index(config), []).append(got)
                    if "error" not in got and engine == "bfs" and not symmetry and full_distinct is None:
                        full_distinct = got["distinct"]
            for i, config in enumerate(configs):
                ok = [r for r in runs[i] if "error" not in r]
                if not ok:
                    rec = {**config, **runs[i][0]}
                else:
                    ok.sort(key=lambda r: r["elapsed"])
                    rec = {**config, **ok[len(ok) // 2], "repeats": len(ok)}
                rec.update(run=run_id, cores=os.cpu_count(), python=platform.python_version())
                if symmetry and cost and "error" not in cost:
                    rec["symmetry_cost_cpu"] = cost["cost_ratio"]
                    rec["canonical_us"] = cost["canonical_extra"] * 1e6
                records.append(rec)
                if partial is not None:
                    with partial.open("a") as f:
                        f.write(json.dumps(rec) + "\n")
                print(_one_line(rec), file=sys.stderr, flush=True)
    _derive(records)
    return records


def _one_line(r: dict[str, Any]) -> str:
    head = f"{r['model']} {r['bounds']} {r['engine']} sym={r['symmetry']}"
    if "error" in r:
        return f"{head}: ERROR {r['error']}"
    return (f"{head}: {r['distinct']:,} states {r['elapsed']:.1f}s "
            f"{r['distinct'] / r['elapsed']:,.0f}/s load {r['load_before']:.1f}->{r['load_after']:.1f}")


def _derive(records: list[dict[str, Any]]) -> None:
    """Ratios between configurations of the same model and size, within this run."""
    def key(r: dict[str, Any], **over: Any) -> tuple:
        d = {**r, **over}
        workers = d["workers"] if d["engine"] == "parallel" else 0
        return (d["model"], json.dumps(d["bounds"], sort_keys=True), d["engine"], workers, d["symmetry"])

    index = {key(r): r for r in records if "error" not in r}
    for r in records:
        if "error" in r:
            continue
        r["distinct_per_s"] = r["distinct"] / r["elapsed"]
        r["generated_per_s"] = r["generated"] / r["elapsed"]
        r["bytes_per_state"] = r["peak_rss"] / max(r["distinct"], 1)
        r["bytes_per_state_over_baseline"] = (r["peak_rss"] - r["baseline_rss"]) / max(r["distinct"], 1)
        r["cpu"] = r["cpu_self"] + r["cpu_children"]
        one = index.get(key(r, workers=1))
        if one and r["engine"] == "parallel" and r["workers"] > 1:
            r["speedup_vs_one_worker"] = one["elapsed"] / r["elapsed"]
        bfs = index.get(key(r, engine="bfs"))
        if bfs and r["engine"] != "bfs":
            r["speedup_vs_bfs"] = bfs["elapsed"] / r["elapsed"]
            if r["engine"] == "parallel":
                # What the same work would give on idle cores: the BFS's CPU time over the
                # parallel run's CPU time per worker (workers are balanced to within SLACK), plus
                # the coordinating process's own CPU, which does not overlap the workers' (the
                # first levels it expands itself before forking, ``parallel.HEAD_FRONTIER``).
                r["cpu_speedup_estimate"] = (bfs["cpu_self"] + bfs["cpu_children"]) / (
                    r["cpu_self"] + r["cpu_children"] / r["workers"])
            r["counts_match_bfs"] = (r["distinct"], r["generated"], r["depth"]) == \
                (bfs["distinct"], bfs["generated"], bfs["depth"])
        if r["symmetry"]:
            full = index.get(key(r, symmetry=False))
            if full:
                r["reduction"] = full["distinct"] / max(r["distinct"], 1)
                r["symmetry_cost_per_generated"] = ((r["elapsed"] / r["generated"])
                                                    / (full["elapsed"] / full["generated"]))
                r["symmetry_wall_speedup"] = full["elapsed"] / r["elapsed"]


def _fmt(value: Any, spec: str = ",.0f") -> str:
    return "" if value is None else format(value, spec)


def table(records: list[dict[str, Any]]) -> str:
    head = ("| model | size | engine | sym | distinct | generated | depth | s | distinct/s | "
            "generated/s | peak RSS B/state | over baseline B/state | speedup vs bfs | vs 1 worker | idle-core estimate | same counts | reduction | "
            "sym cost/gen (wall) | sym cost/gen (CPU, sampled) | load |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in records:
        size = ",".join(f"{k}={v}" for k, v in r["bounds"].items())
        if "error" in r:
            lines.append(f"| {r['model']} | {size} | {r['engine']} | {r['symmetry']} | error: "
                         f"{r['error']} |" + " |" * 15)
            continue
        lines.append(
            f"| {r['model']} | {size} | {r['engine']}{'' if r['engine'] != 'parallel' else ' x' + str(r['workers'])}"
            f" | {'on' if r['symmetry'] else 'off'} | {r['distinct']:,} | {r['generated']:,} | {r['depth']}"
            f" | {r['elapsed']:.1f} | {_fmt(r['distinct_per_s'])} | {_fmt(r['generated_per_s'])}"
            f" | {_fmt(r['bytes_per_state'])} | {_fmt(r['bytes_per_state_over_baseline'])}"
            f" | {_fmt(r.get('speedup_vs_bfs'), '.2f')} | {_fmt(r.get('speedup_vs_one_worker'), '.2f')}"
            f" | {_fmt(r.get('cpu_speedup_estimate'), '.2f')}"
            f" | {'' if 'counts_match_bfs' not in r else ('yes' if r['counts_match_bfs'] else 'NO')}"
            f" | {_fmt(r.get('reduction'), '.1f')} | {_fmt(r.get('symmetry_cost_per_generated'), '.2f')}"
            f" | {_fmt(r.get('symmetry_cost_cpu'), '.2f')}"
            f" | {r['load_before']:.1f}-{r['load_after']:.1f}"
            f"{'' if r.get('idle_before') is None else ' (idle %.0f%%)' % (100 * r['idle_before'])}"
            f"{_machine(r)} |")
    return "\n".join(lines)


def _machine(r: dict[str, Any]) -> str:
    """Others' CPU seconds and steal during the run, and each worker's CPU seconds (older records
    have none of them)."""
    if "machine_others_cpu" not in r:
        return ""
    text = f"; others {r['machine_others_cpu']:.1f} s, steal {r['machine_steal']:.1f} s"
    if r.get("workers_cpu"):
        text += "; workers' CPU " + "/".join(f"{w['cpu']:.1f}" for w in r["workers_cpu"]) + " s"
    return text


def against_targets(records: list[dict[str, Any]], store_rows: list[dict[str, Any]]) -> str:
    """The issue's targets next to what this run measured (largest size of each kind)."""
    ok = [r for r in records if "error" not in r]
    lines = ["| target | measured | met |", "|---|---|---|"]

    def row(name: str, target: str, value: str, met: bool | None) -> None:
        lines.append(f"| {name} ({target}) | {value} | {'' if met is None else ('yes' if met else 'no')} |")

    kafka = [r for r in ok if r["model"].startswith("kafka.") and r["engine"] == "bfs" and not r["symmetry"]]
    if kafka:
        big = max(kafka, key=lambda r: r["distinct"])
        cpu_rate = big["distinct"] / max(big["cpu"], 1e-9)
        row("single core, Kafka model", ">= 100,000 distinct/s",
            f"{big['distinct_per_s']:,.0f}/s wall, {cpu_rate:,.0f}/s per CPU-second "
            f"({big['distinct']:,} states)", cpu_rate >= TARGETS["single_core_states_per_s"])
    for r in store_rows:
        per = (r["visited_bytes"] + r["parent_bytes"]) / r["states"]
        row(f"compact store at {r['states']:,} states{' (parents spilled)' if r['spill'] else ''}",
            "<= 32 B/state", f"{per:.1f} B/state held, {r['traced_peak'] / r['states']:.1f} traced peak",
            r["traced_peak"] / r["states"] <= TARGETS["bytes_per_state"])
    sym = [r for r in ok if r.get("symmetry_cost_cpu") is not None and r["engine"] == "bfs"]
    if sym:
        worst = max(sym, key=lambda r: r["symmetry_cost_cpu"])
        row("symmetry cost per generated state", "<= 2x",
            f"{worst['symmetry_cost_cpu']:.2f}x ({worst['model']} {worst['bounds']}, "
            f"{worst['canonical_us']:.2f} us per canonical form); reduction {worst.get('reduction', 0):.0f}x",
            worst["symmetry_cost_cpu"] <= TARGETS["symmetry_cost"])
    par = [r for r in ok if r["engine"] == "parallel" and r["workers"] > 1 and not r["symmetry"]
           and "speedup_vs_bfs" in r]
    if par:
        big = max(par, key=lambda r: r["distinct"])
        vs_one = (f", {big['speedup_vs_one_worker']:.2f}x over 1 worker" if "speedup_vs_one_worker" in big
                  else "")
        row("2-core speedup", ">= 1.7x", f"{big['speedup_vs_bfs']:.2f}x over the BFS wall-clock on a "
            f"shared machine{vs_one}, {big.get('cpu_speedup_estimate', 0):.2f}x estimated from CPU time "
            f"({big['model']}, {big['distinct']:,} states)",
            big["speedup_vs_bfs"] >= TARGETS["speedup_2_cores"])
    compared = [r for r in ok if "counts_match_bfs" in r]
    if compared:
        row("identical counts across engines", "all", f"{sum(r['counts_match_bfs'] for r in compared)}"
            f" of {len(compared)} runs equal to the BFS", all(r["counts_match_bfs"] for r in compared))
    return "\n".join(lines)


def store_table(rows: list[dict[str, Any]]) -> str:
    lines = [("| states | spill parents | visited B/state | parents B/state | traced peak B/state | "
              "RSS delta B/state | target |"), "|---|---|---|---|---|---|---|"]
    for r in rows:
        n = r["states"]
        lines.append(f"| {n:,} | {'yes' if r['spill'] else 'no'} | {r['visited_bytes'] / n:.1f} | "
                     f"{r['parent_bytes'] / n:.1f} | {r['traced_peak'] / n:.1f} | "
                     f"{r['rss_delta'] / n:.1f} | <= {TARGETS['bytes_per_state']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-json", help=argparse.SUPPRESS)
    parser.add_argument("--store-json", help=argparse.SUPPRESS)
    parser.add_argument("--symcost-json", help=argparse.SUPPRESS)
    parser.add_argument("--plan", action="append", help="model:sizes (see the module docstring)")
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--engines", default="bfs,parallel:1,parallel,spark",
                        help="comma-separated; parallel:N = N workers (default --workers)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1, help="runs per configuration (median kept)")
    parser.add_argument("--spark-max", type=int, default=400_000,
                        help="skip Spark on sizes whose full space exceeds this many states")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--wait-idle", type=float, default=0, metavar="SECONDS",
                        help="before each run, wait up to this long for >= 90%% idle CPU")
    parser.add_argument("--store", type=int, nargs="*", help="only measure the compact store at these sizes")
    parser.add_argument("--no-store", action="store_true", help="skip the compact store measurement")
    parser.add_argument("--out", type=Path, default=RESULTS / "scale.jsonl")
    parser.add_argument("--from-partial", type=Path, metavar="FILE",
                        help="tabulate the records an interrupted run left in FILE (no new runs)")
    args = parser.parse_args(argv)

    if args.run_json:
        print(json.dumps(run_one(json.loads(args.run_json))))
        return 0
    if args.symcost_json:
        print(json.dumps(symcost_one(json.loads(args.symcost_json))))
        return 0
    if args.store_json:
        print(json.dumps(store_one(**json.loads(args.store_json))))
        return 0

    store_sizes = args.store if args.store is not None else ([] if args.no_store else
                                                             [1_000_000, 5_000_000])
    store_rows = []
    partial = args.out.with_suffix(".partial.jsonl")
    if not args.from_partial:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        partial.unlink(missing_ok=True)
    for n in store_sizes if not args.from_partial else []:
        for spill in (False, True):
            row = _child("store", {"states": n, "spill": spill}, args.timeout)
            if "error" not in row:
                store_rows.append(row)
                with partial.open("a") as f:
                    f.write(json.dumps({"kind": "store", **row}) + "\n")
                print(f"store {n:,} spill={spill}: {(row['visited_bytes'] + row['parent_bytes']) / n:.1f} "
                      f"B/state", file=sys.stderr)
    records: list[dict[str, Any]] = []
    if args.from_partial:
        rows = [json.loads(line) for line in args.from_partial.read_text().splitlines() if line.strip()]
        records = [r for r in rows if r.get("kind") != "store"]
        store_rows = [r for r in rows if r.get("kind") == "store"]
        _derive(records)
    elif args.store is None:
        plan = [p for text in args.plan for p in parse_plan(text)] if args.plan else default_plan(args.quick)
        engines = [e for e in args.engines.split(",") if e != "spark" or spark_available()]
        records = bench(plan, engines, args.spark_max, args.timeout, args.workers, args.repeat,
                        args.wait_idle, partial)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a") as f:
        for r in records:
            f.write(json.dumps({"kind": "explore", **r}) + "\n")
        for r in store_rows:
            f.write(json.dumps({"kind": "store", **r}) + "\n")
    ok = [r for r in records if "error" not in r]
    head = (f"bench/bench_scale.py, run {ok[0]['run']}, {ok[0]['cores']} cores, Python {ok[0]['python']}; "
            "each configuration in a fresh subprocess; wall-clock figures on a machine shared with "
            "other work (load and idle share before each run in the last column).\n\n" if ok else "")
    text = head + against_targets(records, store_rows) + "\n\n"
    if records:
        text += table(records) + "\n"
    if store_rows:
        text += "\n" + store_table(store_rows) + "\n"
    print(text)
    args.out.with_suffix(".md").write_text(text)
    if not args.from_partial:
        partial.unlink(missing_ok=True)  # the records are in --out now
    return 0


if __name__ == "__main__":
    sys.exit(main())
