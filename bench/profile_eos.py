"""Where kafka.eos spends its time: a BFS of one ``bench_eos.py`` plan entry with every memo miss
counted and timed (per rule, invariant and transition property, ``within_bounds``, ``canonical``),
optionally under cProfile.

    python bench/profile_eos.py 'kafka-4.0:restarts=1,transactions=2,input_records=1,max_ticks=2' --max-states 300000
    python bench/profile_eos.py '...' --cprofile 30      # also the 30 costliest functions (cumulative)

Misses cost tens of microseconds, hits a fraction of one: a rule that misses often reads a slot
that changes often, and its ``reads=`` is the place to look.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_eos import EOS, parse


def instrument(m: Any, cpu: bool = False) -> tuple[Counter[str], defaultdict[str, float]]:
    """Count and time every memo miss of ``m``'s rules and properties (patched on the instances);
    ``cpu``: CPU time of the process (steadier on a shared machine, a little dearer per call)."""
    from eoscheck.checker.compose.properties import _Invariant, _Transition
    from eoscheck.checker.compose.rules import _Rule

    misses: Counter[str] = Counter()
    spent: defaultdict[str, float] = defaultdict(float)
    plan = m._plan
    clock = time.process_time if cpu else time.perf_counter

    def wrap(name: str, fn: Any) -> Any:
        def counted(*args: Any) -> Any:
            misses[name] += 1
            t0 = clock()
            try:
                return fn(*args)
            finally:
                spent[name] += clock() - t0
        return counted

    for rule in plan.rules:
        if isinstance(rule, _Rule):
            rule.compute = wrap("rule " + rule.action, rule.compute)  # type: ignore[method-assign]
            if rule.gate_calls:  # a miss of its narrow preconditions' memo (``_Binding.gate_slots``)
                rule.gate = wrap("gate " + rule.action, rule.gate)  # type: ignore[method-assign]
    for obj in plan.property_objs.values():
        kind = "inv " if isinstance(obj, _Invariant) else "trans "
        assert isinstance(obj, (_Invariant, _Transition))
        if isinstance(obj, _Invariant):  # one miss function per binding (``_Invariant.make_misses``)
            def wrapped(make: Any = obj.make_misses, name: str = kind + obj.spec.name) -> list[Any]:
                return [wrap(name, miss) for miss in make()]
            obj.make_misses = wrapped  # type: ignore[method-assign]
        else:
            obj.miss = wrap(kind + obj.spec.name, obj.miss)  # type: ignore[method-assign]
        obj.compile()
    plan.compile()  # the rules' inlined bodies pick up the patched compute
    for rule in plan.rules:
        if isinstance(rule, _Rule):
            rule.compile()
    plan.compile()
    for name in ("within_bounds", "canonical"):
        setattr(m, name, wrap("call " + name, getattr(m, name)))
    return misses, spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan")
    parser.add_argument("--max-states", type=int, default=None)
    parser.add_argument("--cprofile", type=int, default=0, help="print this many functions of a cProfile")
    parser.add_argument("--no-count", action="store_true", help="no miss counting (cProfile only)")
    parser.add_argument("--cpu", action="store_true", help="time misses in CPU seconds, not wall clock")
    args = parser.parse_args()
    model, variant, bounds, symmetry = parse(args.plan)

    from eoscheck.checker.explore import explore
    from eoscheck.checker.explore.options import ExploreOptions
    from eoscheck.checker.registry import find_model
    from eoscheck.model.machines.eos import machine

    m = machine(variant, **bounds) if model == EOS else find_model(model).machine(variant, bounds=bounds)
    misses, spent = instrument(m, args.cpu) if not args.no_count else (Counter(), defaultdict(float))
    options = ExploreOptions(stop_at_first=False, symmetry=symmetry, max_states=args.max_states)
    prof = cProfile.Profile() if args.cprofile else None
    wall, cpu = time.perf_counter(), time.process_time()
    if prof:
        prof.enable()
    result = explore(m, options)
    if prof:
        prof.disable()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    st = result.stats
    print(f"{args.plan}: {st.distinct} distinct, {st.generated} generated, depth {st.depth}, {wall:.1f} s wall, "
          f"{cpu:.1f} s cpu, {st.distinct / cpu:,.0f} distinct/cpu-s, verdict {result.verdict}")
    if misses:
        print(f"{'what':45} {'misses':>9} {'per state':>9} {'s':>7} {'us/miss':>8}")
        for name, n in sorted(misses.items(), key=lambda kv: -spent[kv[0]]):
            print(f"{name:45} {n:9} {n / st.distinct:9.3f} {spent[name]:7.2f} {1e6 * spent[name] / n:8.1f}")
    if prof:
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.cprofile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
