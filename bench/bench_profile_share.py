"""Where a kafka.eos run spends its time: engine + composition against the model's own code (issue 12's
"engine plus composition overhead at most 25% of a profile").

    python bench/bench_profile_share.py                         # the first bench_eos configuration, 300k states
    python bench/bench_profile_share.py --plan kafka-4.0:producers=2,lost_responses=1 --states 200000

A BFS (every property checked, as a spec would) runs in a fresh subprocess while a sampling thread
looks at the main thread's innermost Python frame every millisecond (``sys._current_frames``; the
interpreter's switch interval is set to 0.5 ms so the sampler gets the GIL when it asks). Each
sample goes to a bucket by the file of that frame:

* **model**: ``model/`` (rule effects and guards, property bodies, the model's ``within_bounds``,
  ``canonical`` and ``is_terminal``, the Kafka data structures), and the code the model generates
  (``<kafka.eos within_bounds>``, ``<kafka.eos permutation ...>``: its constraint and canonical form,
  charged to the engine that called them before 2026-11-27's session 8);
* **engine+composition**, reported together (issue 12's figure) and apart:

  - *composition*: ``checker/compose/`` and the code it generates (``<compose ...>``: successors,
    memo lookups, fused checks);
  - *engine*: the rest of ``checker/`` (the engines, the visited set, fingerprints) and of
    ``eoscheck``;
* a frame of the standard library goes to the first frame above it that has a bucket. Built-ins
  (``dict.get``, ``hash``, ``tuple``) have no frame: their time is their caller's.

Sampling does not inflate small calls the way a tracing profiler does (``--cprofile`` gives
cProfile's view, CPU-timed, for comparison: it overstates the share of code made of many small
calls). Appends a JSON record to ``bench/results/profile-share.jsonl`` and rewrites
``bench/results/profile-share.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Self

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DEFAULT = "kafka-4.0:restarts=1,transactions=2,input_records=1,max_ticks=2"


def bucket(filename: str) -> str | None:
    """'model', 'composition', 'engine' or None (built-in or standard library: charged to the caller)."""
    f = filename.replace("\\", "/")
    if f.startswith("<compose") or "/checker/compose/" in f:
        return "composition"
    if f.startswith("<kafka."):  # code model/machines generates: the model's constraint and canonical form
        return "model"
    if "/model/" in f:
        return "model"
    if "/checker/" in f or "/eoscheck/" in f:  # eoscheck's own top level (cli, registry): engine side
        return "engine"
    return None


def shares(stats: dict[Any, Any]) -> dict[str, float]:
    """Seconds per bucket from ``pstats.Stats.stats`` ({func: (cc, nc, tt, ct, callers)})."""
    out = {"model": 0.0, "composition": 0.0, "engine": 0.0, "other": 0.0}

    def owner(func: Any, depth: int) -> list[tuple[str, float]]:
        """(bucket, weight) of a built-in's time, split over its callers."""
        entry = stats.get(func)
        if entry is None or depth > 3:
            return [("other", 1.0)]
        callers = entry[4]
        total = sum(c[2] for c in callers.values())
        if not callers or total <= 0:
            return [("other", 1.0)]
        parts: list[tuple[str, float]] = []
        for caller, c in callers.items():
            b = bucket(caller[0])
            w = c[2] / total
            if b is None:
                parts += [(bb, w * ww) for bb, ww in owner(caller, depth + 1)]
            else:
                parts.append((b, w))
        return parts

    for func, (_cc, _nc, tt, _ct, _callers) in stats.items():
        b = bucket(func[0])
        if b is not None:
            out[b] += tt
        else:
            for bb, w in owner(func, 0):
                out[bb] += tt * w
    return out


def frame_bucket(frame: Any) -> str:
    while frame is not None:
        b = bucket(frame.f_code.co_filename)
        if b is not None:
            return b
        frame = frame.f_back
    return "other"


class Sampler:
    """Samples the calling thread's innermost frame from a daemon thread."""

    def __init__(self, interval: float = 0.001) -> None:
        import threading
        self.interval = interval
        self.target = threading.get_ident()
        self.counts = {"model": 0, "composition": 0, "engine": 0, "other": 0}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self) -> None:
        while not self.done.wait(self.interval):
            frame = sys._current_frames().get(self.target)
            if frame is not None:
                self.counts[frame_bucket(frame)] += 1

    def __enter__(self) -> Self:
        sys.setswitchinterval(0.0005)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()


def run_child(plan: str, states: int, use_cprofile: bool, memoize: bool = True) -> dict[str, Any]:
    import cProfile
    import pstats

    sys.path.insert(0, str(HERE))
    from bench_eos import EOS, parse
    from eoscheck.checker.explore import explore
    from eoscheck.checker.explore.options import ExploreOptions
    from eoscheck.checker.registry import find_model
    from eoscheck.model.machines.eos import EosMachine, machine

    model, variant, bounds, symmetry = parse(plan)
    m = machine(variant, **bounds) if model == EOS else find_model(model).machine(variant, bounds=bounds)
    if not memoize:
        if not isinstance(m, EosMachine):
            raise SystemExit(f"bench_profile_share: --no-memo needs a kafka.eos plan, not {plan!r}")
        m = type(m)(m.protocol, m.bounds, memoize=False)
    options = ExploreOptions(stop_at_first=False, symmetry=symmetry, max_states=states)
    cpu = time.process_time()
    if use_cprofile:
        prof = cProfile.Profile(time.process_time)  # CPU time: the machine is shared
        prof.enable()
        result = explore(m, options)
        prof.disable()
        weights = shares(pstats.Stats(prof).stats)  # type: ignore[attr-defined]
    else:
        with Sampler() as sampler:
            result = explore(m, options)
        weights = {k: float(v) for k, v in sampler.counts.items()}
    cpu = time.process_time() - cpu
    total = sum(weights.values()) or 1.0
    import eoscheck
    return {"checkout": str(Path(eoscheck.__file__).resolve().parent.parent), "plan": plan,
            "method": ("cprofile" if use_cprofile else "sampling") + ("" if memoize else ", memoize=False"),
            "distinct": result.stats.distinct,
            "generated": result.stats.generated, "cpu_s": round(cpu, 2),
            "distinct_per_cpu_s": round(result.stats.distinct / cpu),
            "weights": {k: round(v, 2) for k, v in weights.items()},
            "engine_share": round((weights["engine"] + weights["composition"]) / total, 3),
            "exploration_share": round(weights["engine"] / total, 3),
            "composition_share": round(weights["composition"] / total, 3),
            "model_share": round(weights["model"] / total, 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", action="append", help="[model@]variant:bound=value,...[/symmetry] (bench_eos.py)")
    parser.add_argument("--states", type=int, default=300_000, help="distinct states per run (max_states)")
    parser.add_argument("--md", default="profile-share.md")
    parser.add_argument("--cprofile", action="store_true", help="cProfile's tottime instead of sampling")
    parser.add_argument("--no-memo", action="store_true",
                        help="kafka.eos with memoize=False: every rule runs on every state (what the mechanism "
                             "costs beside the model's own work, without its cache)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.states <= 0:
        print("bench_profile_share: --states must be positive", file=sys.stderr)
        return 2
    if args.child:
        print(json.dumps(run_child(args.child, args.states, args.cprofile, memoize=not args.no_memo)))
        return 0
    RESULTS.mkdir(exist_ok=True)
    rows = []
    for plan in args.plan or [DEFAULT]:
        load = os.getloadavg()[0]
        out = subprocess.run([sys.executable, __file__, "--child", plan, "--states", str(args.states),
                              *(["--cprofile"] if args.cprofile else []), *(["--no-memo"] if args.no_memo else [])],
                             check=True, capture_output=True, text=True).stdout
        record = {**json.loads(out.splitlines()[-1]), "load_before": round(load, 2),
                  "load_after": round(os.getloadavg()[0], 2), "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        with open(RESULTS / "profile-share.jsonl", "a") as f:
            f.write(json.dumps(record) + "\n")
        print(json.dumps(record), flush=True)
        rows.append(record)
    lines = [("| configuration | method | distinct | CPU s | engine+composition | of which engine | of which composition "
              "| model | target (<= 25%) | load |"),
             "|---|---|---:|---:|---:|---:|---:|---:|---|---:|"]
    fresh = {(r["plan"], r["method"]): (f"| {r['plan']} | {r['method']} | {r['distinct']:,} | {r['cpu_s']:.1f} | "
                                        f"{r['engine_share']:.0%} | {r['exploration_share']:.0%} | "
                                        f"{r['composition_share']:.0%} | {r['model_share']:.0%} | "
                                        f"{'met' if r['engine_share'] <= 0.25 else 'not met'} | {r['load_before']} |")
             for r in rows}
    table = RESULTS / args.md
    for line in (table.read_text().splitlines()[2:] if table.exists() else []):  # other rows stay
        cells = [c.strip() for c in line.split("|")]
        lines.append(fresh.pop((cells[1], cells[2]), line))
    lines += fresh.values()
    table.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
