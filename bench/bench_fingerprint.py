"""Fingerprint cost per state: CPython ``hash`` against the sound ``encoded`` kind
(``checker.fingerprint``), on states of each Kafka machine and an example, and what each machine
uses.

    python bench/bench_fingerprint.py            # appends to bench/results/fingerprint.jsonl, writes .md

For each model: the first ``--states`` states of a BFS (their successors' objects share parts the
way a run's do), each fingerprint function mapped over them ``--repeat`` times, the best time per
state kept; next to it the machine's own successor cost per generated state, which is what a
fingerprint adds to. Wall-clock on a shared machine: ratios within one model are what to read.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import timeit
from collections import deque
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MODELS = [("kafka.idempotent_produce", {"clients": 2, "records": 3}),
          ("kafka.init_producer_id", {}),
          ("kafka.eos_pipeline", {}),
          ("examples.twophase", {"rms": 5})]


def measure(model: str, bounds: dict[str, int], count: int, repeat: int) -> dict[str, Any]:
    from eoscheck.checker.fingerprint import encoder
    from eoscheck.checker.registry import find_model

    machine = find_model(model).machine(bounds=bounds)
    states: list = []
    frontier = deque(machine.init_states())
    seen: set = set()
    while frontier and len(states) < count:
        state = frontier.popleft()
        for _step, nxt in machine.successors(state):
            if nxt not in seen:
                seen.add(nxt)
                states.append(nxt)
                frontier.append(nxt)

    def best(fn: Any) -> float:
        return min(timeit.repeat(lambda: list(map(fn, states)), number=1, repeat=repeat)) / len(states)

    sample = states[: min(len(states), 2000)]
    t0 = time.perf_counter()
    generated = sum(1 for s in sample for _ in machine.successors(s))
    succ = (time.perf_counter() - t0) / max(generated, 1)
    return {"model": model, "bounds": bounds, "states": len(states),
            "kind": getattr(machine, "fingerprint_kind", "encoded"),
            "hash_ns": best(hash) * 1e9, "encoded_ns": best(encoder()) * 1e9,
            "successors_ns_per_generated": succ * 1e9}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--states", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "fingerprint.jsonl")
    args = parser.parse_args(argv)
    run = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    rows = []
    for model, bounds in MODELS:
        row = measure(model, bounds, args.states, args.repeat)
        row.update(run=run, python=platform.python_version(), load=os.getloadavg()[0])
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    head = (f"bench/bench_fingerprint.py, run {run}, Python {platform.python_version()}; best of "
            f"{args.repeat} passes over up to {args.states:,} BFS states per model.")
    lines = [head, "",
             "| model | kind used | hash ns/state | encoded ns/state | encoded / hash | successors ns/generated | load |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['kind']} | {r['hash_ns']:.0f} | {r['encoded_ns']:.0f} | "
                     f"{r['encoded_ns'] / r['hash_ns']:.1f}x | {r['successors_ns_per_generated']:.0f} | "
                     f"{r['load']:.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.with_suffix(".md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
