"""Random simulation: ``walks`` random walks of at most ``walk_depth`` states from the initial states.

For spaces too large to exhaust. Reproducible: one ``random.Random(seed)`` drives every choice,
and choices are made among the machine's successors in the machine's order, so the same seed
gives the same walks in every process. On every state of a walk, all successors are generated and
checked (invariants on each successor, transition properties on each step, deadlock when there is
none), then one is chosen uniformly to continue. A walk ends at ``walk_depth`` states or at a
state with no successor inside the state constraint.

Simulation never proves anything: without a violation the verdict is "incomplete". Traces are
shortened like DFS traces (``checker.trace.shorten_trace``).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from ..fingerprint import check_state
from ..machine import Machine
from ..result import Result, Stats, TraceStep
from .common import (Ticker, build_coverage, describe_limit, select_properties,
                     shortened_violation)
from .options import ExploreOptions

if TYPE_CHECKING:
    from ..progress import Progress


def explore_simulate(machine: Machine, options: ExploreOptions, progress: Progress | None = None) -> Result:
    invariants, transitions = select_properties(machine, options.properties)
    symmetry = options.symmetry and machine.has_symmetry()
    canonical = machine.canonical
    within = machine.within_bounds
    successors = machine.successors
    is_terminal = machine.is_terminal
    rng = random.Random(options.seed)
    ticker = Ticker(progress, "simulate", options.max_seconds)
    max_states = options.max_states

    seen: set[int] = set()
    gen_cov: dict[str, int] = {}
    new_cov: dict[str, int] = {}
    generated = 0
    longest = 0
    walks_done = 0
    limit_hit: str | None = None
    found: list[tuple[str, str, list[TraceStep]]] = []
    violated: set[str] = set()
    stop = False

    def fp(state) -> int:
        return hash(canonical(state)) if symmetry else hash(state)

    def report(name: str, kind: str, trace: list[TraceStep]) -> None:
        nonlocal stop
        found.append((name, kind, trace))
        violated.add(name)
        stop = stop or options.stop_at_first

    inits = []
    for s in machine.init_states():
        generated += 1
        if within(s):
            check_state(s)
            inits.append(s)
            if fp(s) not in seen:
                seen.add(fp(s))
                for name, check in invariants:
                    if name not in violated and not check(s):
                        report(name, "invariant", [TraceStep(None, s)])

    for _ in range(options.walks if inits else 0):
        if stop:
            break
        state = rng.choice(inits)
        walk = [TraceStep(None, state)]
        while len(walk) < options.walk_depth and not stop:
            succs = list(successors(state))
            generated += len(succs)
            if not succs:
                if options.check_deadlock and "deadlock" not in violated and not is_terminal(state):
                    report("deadlock", "deadlock", list(walk))
                break
            allowed = []
            for step, nxt in succs:
                action = step[0]
                gen_cov[action] = gen_cov.get(action, 0) + 1
                if not within(nxt):
                    continue
                allowed.append((step, nxt))
                for name, check in transitions:
                    if name not in violated and not check(state, step, nxt):
                        report(name, "transition", walk + [TraceStep(step, nxt)])
                h = fp(nxt)
                if h not in seen:
                    seen.add(h)
                    new_cov[action] = new_cov.get(action, 0) + 1
                    for name, check in invariants:
                        if name not in violated and not check(nxt):
                            report(name, "invariant", walk + [TraceStep(step, nxt)])
                if stop:
                    break
            if stop or not allowed:
                break
            step, state = rng.choice(allowed)
            walk.append(TraceStep(step, state))
        longest = max(longest, len(walk))
        walks_done += 1
        if max_states is not None and len(seen) >= max_states:
            limit_hit = "states"
            break
        if ticker.out_of_time():
            limit_hit = "time"
            break
        ticker.maybe_update(lambda: Stats(len(seen), generated, longest, 0, ticker.elapsed()),
                            None, f"walk {walks_done}/{options.walks}")

    stats = Stats(distinct=len(seen), generated=generated, depth=longest, queue=0,
                  elapsed=ticker.elapsed(), coverage=build_coverage(machine, gen_cov, new_cov))
    violations = [shortened_violation(machine, name, kind, trace, symmetry)
                  for name, kind, trace in found]
    notes = []
    if limit_hit:
        value = {"states": max_states, "time": options.max_seconds}[limit_hit]
        notes.append(describe_limit(limit_hit, value))
    if not violations:
        notes.append(f"simulation never proves 'holds': {walks_done} random walks of up to "
                     f"{options.walk_depth} states (seed {options.seed}) found no violation")
    ticker.finish(stats)
    return Result(verdict="violated" if violations else "incomplete", strategy="simulate",
                  stats=stats, violations=violations, limit_hit=limit_hit, notes=notes)
