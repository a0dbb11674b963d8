"""Random simulation: ``walks`` random walks of at most ``walk_depth`` states from the initial states.

For spaces too large to exhaust. Reproducible: one ``random.Random(seed)`` drives every choice,
and choices are made among the machine's successors in the machine's order, so the same seed
gives the same walks in every process. On every state of a walk, all successors are generated and
checked (invariants on each successor, transition properties on each step, deadlock when there is
none), then one is chosen uniformly to continue. A walk ends at ``walk_depth`` states or at a
state with no successor inside the state constraint.

Simulation never proves anything: without a violation the verdict is "incomplete". Traces are
shortened like DFS traces (``checker.trace.shorten_trace``).

Temporal properties (``options.temporal``, with ``temporal=True``) are judged on each walk as a
lasso when a concrete state repeats, or where the walk stops with no fair action enabled
(``checker.liveness.walks``); the steps leaving the state constraint are then generated too, as
the liveness graph does, to know which actions are enabled. The walks themselves do not change.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from ..fingerprint import observed_collision_probability
from ..liveness.walks import Instance, WalkChecker
from ..machine import Machine
from ..result import Result, Stats, TraceStep, Violation, ViolationKind
from .common import Ticker, build_coverage, describe_limit, shortened_violation
from .expand import Expander
from .options import ExploreOptions

if TYPE_CHECKING:
    from ..progress import Progress


def explore_simulate(machine: Machine, options: ExploreOptions, progress: Progress | None = None,
                     temporal: bool = False) -> Result:
    expander = Expander(machine, options.properties, symmetry=options.symmetry, view=options.view,
                        check_deadlock=options.check_deadlock, stop_at_first=options.stop_at_first)
    fpr = expander.fp
    rng = random.Random(options.seed)
    ticker = Ticker(progress, "simulate", options.max_seconds)
    max_states = options.max_states

    seen: set[int] = set()
    gen_cov: dict[str, int] = {}
    out_cov: dict[str, int] = {}  # of gen_cov, cut by the state constraint
    new_cov: dict[str, int] = {}
    longest = 0
    walks_done = 0
    limit_hit: str | None = None
    found: list[tuple[str, ViolationKind, list[TraceStep]]] = []
    reported = 0
    lassos: list[Violation] = []  # temporal violations (already lasso-shaped and shortened)
    walks = WalkChecker(machine, options.temporal) if temporal and options.temporal else None

    def take_findings(walk: list[TraceStep]) -> bool:
        """Traces for the expander's new findings (``walk`` ends at the state they concern);
        True if the run must stop."""
        nonlocal reported
        for p in expander.found[reported:]:
            trace = list(walk)
            if p.kind == "transition":
                trace.append(TraceStep(p.step, p.state))
            found.append((p.name, p.kind, trace))
        reported = len(expander.found)
        return expander.stopped

    generated, inits, init_fps = expander.init_states()
    expander.check_sample(inits)
    stop = False
    for s, h in zip(inits, init_fps):
        fpr.check(s)
        if h not in seen:
            seen.add(h)
            expander.check_invariants([s], [h], 1)
            stop = take_findings([TraceStep(None, s)]) or stop

    for _ in range(options.walks if inits else 0):
        if stop:
            break
        state = rng.choice(inits)
        walk = [TraceStep(None, state)]
        if walks is not None:
            marks, enabled, last = [walks.marks(state)], [], {state: 0}
        while len(walk) < options.walk_depth and not stop:
            allowed = []
            en: set[Instance] = set()
            # (steps leaving the constraint too: with temporal properties they make an action enabled)
            for step, nxt, fp in expander.expand_one(state, 0, len(walk), gen_cov, out_of_bounds=True,
                                                     outside=out_cov):
                if walks is not None:
                    en |= walks.instances(step)
                if fp is None:
                    continue
                h = fp
                allowed.append((step, nxt))
                if h not in seen:
                    seen.add(h)
                    action = step[0]
                    new_cov[action] = new_cov.get(action, 0) + 1
                    expander.check_invariants([nxt], [h], len(walk) + 1)
                    if len(expander.found) > reported:
                        stop = take_findings(walk + [TraceStep(step, nxt)])
                if stop:
                    break
            if len(expander.found) > reported:  # a transition (its successor was not yielded) or a deadlock
                stop = take_findings(walk) or stop
            if walks is not None:
                enabled.append(frozenset(en))
                if not stop and not allowed:  # the walk ends here: a stutter, if no fair action is enabled
                    lassos += walks.judge(walk, marks, enabled, len(walk) - 1)
                    stop = bool(lassos) and options.stop_at_first
            if stop or not allowed:
                break
            step, state = rng.choice(allowed)
            walk.append(TraceStep(step, state))
            if walks is not None:
                marks.append(walks.marks(state))
                j = last.get(state)
                if j is not None and len(walks.violated) < len(walks.wanted):  # a cycle closes
                    lassos += walks.judge(walk, marks, enabled, j)
                    stop = bool(lassos) and options.stop_at_first
                last[state] = len(walk) - 1
        longest = max(longest, len(walk))
        walks_done += 1
        expander.check_sample([state], 16)  # the fingerprint's domain where this walk ended
        if max_states is not None and len(seen) >= max_states:
            limit_hit = "states"
            break
        if ticker.out_of_time():
            limit_hit = "time"
            break
        ticker.maybe_update(lambda: Stats(len(seen), generated + sum(gen_cov.values()), longest, 0,  # noqa: B023 - maybe_update calls it at once
                                          ticker.elapsed()),
                            None, f"walk {walks_done}/{options.walks}")

    generated += sum(gen_cov.values())
    stats = Stats(distinct=len(seen), generated=generated, depth=longest, queue=0,
                  elapsed=ticker.elapsed(), coverage=build_coverage(machine, gen_cov, new_cov, out_cov),
                  observed_collision=observed_collision_probability(list(seen)))
    violations = [shortened_violation(machine, name, kind, trace, fpr)
                  for name, kind, trace in found] + lassos
    notes = [walks.note()] if walks is not None else []
    if limit_hit:
        value = {"states": max_states, "time": options.max_seconds}[limit_hit]
        notes.append(describe_limit(limit_hit, value))
    if not violations:
        notes.append(f"simulation never proves 'holds': {walks_done} random walks of up to "
                     f"{options.walk_depth} states (seed {options.seed}) found no violation")
    ticker.finish(stats)
    return Result(verdict="violated" if violations else "incomplete", strategy="simulate",
                  stats=stats, violations=violations, limit_hit=limit_hit, notes=notes)
