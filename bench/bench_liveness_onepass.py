"""Before/after for safety + liveness in one BFS: each configuration (a spec with temporal
properties, optionally with more properties named) run alternately by two interpreters (two
checkouts: before, the engine then the liveness graph; after, one pass), each run in a fresh
subprocess through ``explore`` as ``eoscheck check`` runs it. Records wall and CPU seconds
(``time.process_time``, steadier on a shared machine) and the counts, which must agree.

    python bench/bench_liveness_onepass.py --before "env PYTHONPATH=/tmp/base/site python3" \\
        --after .venv/bin/python --repeat 3

Appends JSON records to ``bench/results/liveness-onepass.jsonl`` and writes a table of medians
to ``bench/results/liveness-onepass.md``.

``--engine dfs --two-pass-before`` compares, in one checkout, the DFS engine's two passes
(``explore_with_liveness(..., one_pass=False)``: the engine, then the BFS liveness walk) with its
one pass (the DFS records the graph); records go to ``liveness-onepass-dfs.{jsonl,md}``:

    python bench/bench_liveness_onepass.py --engine dfs --two-pass-before --after .venv/bin/python
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
REPO = HERE.parent

#: name -> (spec, properties to check instead of the spec's, or None for the spec's own)
CONFIGS: dict[str, tuple[str, list[str] | None]] = {
    "liveness-lso-stuck-kafka-0.11": ("specs/liveness-lso-stuck-kafka-0.11.toml", None),
    "liveness-lso-advances-kafka-2.4": ("specs/liveness-lso-advances-kafka-2.4.toml", None),
    "liveness-eos-beta-kip447": ("specs/liveness-eos-beta-kip447.toml", None),
    "liveness-init-exhausted-epoch-shipped": ("specs/liveness-init-exhausted-epoch-shipped.toml", None),
    "liveness-init-exhausted-epoch-designed": ("specs/liveness-init-exhausted-epoch-designed.toml", None),
    "liveness-idempotent-sends-complete": ("specs/liveness-idempotent-sends-complete.toml", None),
    # the pipeline's safety properties as well (they hold on this space)
    "liveness-eos-beta-kip447+safety": ("specs/liveness-eos-beta-kip447.toml", [
        "TransactionsComplete", "MarkersComplete", "RebalanceSettles", "*"]),
    # a million states: the large spec's safety properties and InitEventuallyCompletes (violated)
    "epoch-overflow-large+liveness": ("specs/large/epoch-overflow-large.toml", [
        "UniqueProducerIdEpoch", "CoordinatorEpochMonotonic", "CoordinatorLegalState", "InitEventuallyCompletes"]),
}


def child(name: str, engine: str, two_pass: bool) -> dict[str, Any]:
    import dataclasses

    from eoscheck.checker.explore import explore
    from eoscheck.checker.registry import find_model
    from eoscheck.checker.spec import build_machine, load_spec, spec_to_options

    import eoscheck

    path, props = CONFIGS[name]
    spec = load_spec(REPO / path)
    machine = build_machine(spec)
    options = spec_to_options(spec)
    if props is not None:
        md = find_model(spec.model)
        safety = list(md.properties) if "*" in props else [p for p in props if p not in md.temporal]
        options = dataclasses.replace(options, properties=tuple(safety),
                                      temporal=tuple(p for p in props if p in md.temporal))
    options = dataclasses.replace(options, strategy=engine)
    cpu, wall = time.process_time(), time.perf_counter()
    if two_pass:
        from eoscheck.checker.explore import _dispatch
        from eoscheck.checker.liveness.run import explore_with_liveness
        r = explore_with_liveness(machine, options, None, _dispatch, one_pass=False)
    else:
        r = explore(machine, options)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"checkout": str(Path(eoscheck.__file__).resolve().parent.parent), "config": name,
            "verdict": r.verdict, "distinct": r.stats.distinct, "generated": r.stats.generated,
            "depth": r.stats.depth, "violations": [[v.property, len(v.trace), v.loop] for v in r.violations],
            "cpu_s": round(cpu, 3), "wall_s": round(wall, 3)}


def run(interpreter: str, name: str, engine: str = "bfs", two_pass: bool = False) -> dict[str, Any]:
    extra = ["--engine", engine] + (["--two-pass"] if two_pass else [])
    out = subprocess.run([*shlex.split(interpreter), __file__, "--child", name, *extra], check=True,
                         capture_output=True, text=True, cwd="/tmp")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", help="interpreter command of the checkout before")
    ap.add_argument("--after", help="interpreter command of the checkout after")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", action="append", choices=sorted(CONFIGS))
    ap.add_argument("--engine", default="bfs", choices=("bfs", "dfs", "parallel"))
    ap.add_argument("--two-pass-before", action="store_true",
                    help="before = the --after checkout's own two passes (one_pass=False)")
    ap.add_argument("--two-pass", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.engine, args.two_pass)))
        return 0
    if args.two_pass_before and not args.before:
        args.before = args.after
    if not args.before or not args.after:
        ap.error("--before and --after are required")
    out_name = "liveness-onepass" + ("" if args.engine == "bfs" else f"-{args.engine}")
    names = args.only or list(CONFIGS)
    rows: dict[str, dict[str, list[dict[str, Any]]]] = {n: {"before": [], "after": []} for n in names}
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    RESULTS.mkdir(exist_ok=True)
    with (RESULTS / f"{out_name}.jsonl").open("a") as log:
        for i in range(args.repeat):
            for name in names:
                for side in (("before", "after") if i % 2 == 0 else ("after", "before")):
                    rec = run(args.before if side == "before" else args.after, name, args.engine,
                              args.two_pass_before and side == "before")
                    rec.update(side=side, at=stamp, round=i, engine=args.engine)
                    rows[name][side].append(rec)
                    log.write(json.dumps(rec) + "\n")
                    print(f"{name} {side}: {rec['cpu_s']:.2f} s CPU, {rec['wall_s']:.2f} s wall, "
                          f"{rec['distinct']:,} states", file=sys.stderr, flush=True)
    lines = [f"# Safety + liveness: two passes (before) and one pass (after), engine {args.engine}, {stamp}", "",
             f"Medians of {args.repeat} interleaved fresh-process runs each (`bench/bench_liveness_onepass.py`).", "",
             "| configuration | verdict | distinct | generated | before wall / CPU | after wall / CPU | CPU after/before | same counts and traces |",
             "|---|---|---|---|---|---|---|---|"]
    for name in names:
        b, a = rows[name]["before"], rows[name]["after"]
        same = all({k: r[k] for k in ("verdict", "distinct", "generated", "depth", "violations")}
                   == {k: b[0][k] for k in ("verdict", "distinct", "generated", "depth", "violations")} for r in a + b)

        def med(rs: list[dict[str, Any]], key: str) -> float:
            return statistics.median(r[key] for r in rs)

        lines.append(f"| {name} | {b[0]['verdict']} | {b[0]['distinct']:,} | {b[0]['generated']:,} | "
                     f"{med(b, 'wall_s'):.2f} / {med(b, 'cpu_s'):.2f} s | {med(a, 'wall_s'):.2f} / {med(a, 'cpu_s'):.2f} s | "
                     f"{med(a, 'cpu_s') / med(b, 'cpu_s'):.2f}x | {'yes' if same else 'NO'} |")
    (RESULTS / f"{out_name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
