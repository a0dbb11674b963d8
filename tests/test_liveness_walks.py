"""Temporal properties on random walks (``--engine simulate``, ``checker.liveness.walks``): every
lasso reported is a real, fair behaviour that violates its property (checked here from the machine
alone, and against the exhaustive check), a walk cut at its depth proves nothing, and the walks
and safety findings are the ones simulation makes without temporal properties."""

from __future__ import annotations

import dataclasses
from typing import Any

from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.liveness import WF, always_eventually, eventually, leads_to
from eoscheck.checker.liveness.temporal import TemporalProperty
from eoscheck.checker.result import Violation
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.liveness_graphs import GraphMachine
from tests.test_liveness_onepass import safety_cases


def instances(machine: Any, step: tuple) -> set:
    return {(i, None if f.per is None else f.per(step)) for i, f in enumerate(machine.fairness())
            if step[0] in f.actions}


def assert_fair_violating_lasso(machine: Any, prop: TemporalProperty, v: Violation) -> None:
    """``v`` is a behaviour of ``machine`` (initial state, every step one the machine yields), shaped
    as a lasso, fair, and violating ``prop``: derived from the machine and the definitions only."""
    states = [t.state for t in v.trace]
    assert states[0] in list(machine.init_states())
    for a, b in zip(v.trace, v.trace[1:]):
        assert (b.step, b.state) in list(machine.successors(a.state))
    assert v.loop is not None and 0 < v.loop <= len(states) - 1 or v.loop == 0 == len(states) - 1
    stutter = v.loop == len(states) - 1 and not (v.loop > 0 and states[v.loop - 1] == states[-1])
    if stutter:
        cycle, taken = [states[-1]], set()
    else:
        assert states[v.loop - 1] == states[-1]
        cycle = states[v.loop - 1:-1]
        taken = set().union(*(instances(machine, t.step) for t in v.trace[v.loop:]))
    enabled = [set().union(*(instances(machine, s) for s, _ in machine.successors(c))) for c in cycle]
    for inst in set().union(*enabled) - taken:
        kind = machine.fairness()[inst[0]].kind
        assert kind == "WF" and not all(inst in e for e in enabled), f"unfair at {inst}"
    bad_from = len(states) - 1 if stutter else v.loop - 1  # the cycle's first index
    lasso = states if stutter else states[:-1]
    if prop.kind == "eventually":
        assert not any(prop.p(s) for s in lasso)
    elif prop.kind == "always_eventually":
        assert not any(prop.p(s) for s in lasso[bad_from:])
    else:
        assert prop.q is not None
        after = next(k for k, s in enumerate(lasso) if prop.p(s) and not any(prop.q(t) for t in lasso[k:]))
        assert after is not None and not any(prop.q(s) for s in lasso[bad_from:])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(safety_cases(), st.integers(0, 3), st.sampled_from([2, 5, 12]))
def test_random_machines_walk_lassos_are_real_violations(case, seed, depth):
    machine, options, _ = case
    opts = dataclasses.replace(options, strategy="simulate", walks=25, walk_depth=depth, seed=seed)
    r = explore(machine, opts)
    plain = explore(machine, dataclasses.replace(opts, temporal=()))
    safety = [v for v in r.violations if v.kind != "temporal"]
    # the same walks: the same safety findings and figures, unless a lasso stopped the run first
    if not (opts.stop_at_first and len(safety) < len(r.violations)):
        assert [(v.property, v.trace) for v in safety] == [(v.property, v.trace) for v in plain.violations]
        assert (r.stats.distinct, r.stats.generated, r.stats.depth) == \
            (plain.stats.distinct, plain.stats.generated, plain.stats.depth)
    prop = machine.temporal["X"]
    exhaustive = explore(machine, ExploreOptions(temporal=("X",), properties=(), check_deadlock=False))
    for v in r.violations:
        if v.kind == "temporal":
            assert_fair_violating_lasso(machine, prop, v)
            assert exhaustive.verdict == "violated"  # sound: the exhaustive check agrees
            assert len(v.trace) <= v.found_length
    assert r.verdict in ("violated", "incomplete")


def test_a_walk_cut_at_its_depth_proves_nothing():
    # x counts down 3 -> 0 under WF(Dec) (tlaplus/tlaplus#204): a walk of 2 states ends at 2, where
    # Dec is enabled; that is not a stutter, so <>(x = 0) is not violated
    m = GraphMachine({3: [("Dec", 2)], 2: [("Dec", 1)], 1: [("Dec", 0)]}, init=[3], fair=[WF("Dec")],
                     temporal=[eventually("Zero", "", lambda s: s[0] == 0)])
    for depth in (1, 2, 3, 4, 10):
        r = explore(m, ExploreOptions(strategy="simulate", temporal=("Zero",), walks=5, walk_depth=depth,
                                      check_deadlock=False))
        assert r.verdict == "incomplete" and not r.violations and r.strategy == "simulate"
        assert any("a walk cut at walk_depth is no behaviour" in n for n in r.notes)
    # without fairness the walk that stops at 3 (stuttering there) is a violation
    lazy = GraphMachine(m.edges, init=[3], temporal=[eventually("Zero", "", lambda s: s[0] == 0)])
    r = explore(lazy, ExploreOptions(strategy="simulate", temporal=("Zero",), walks=5, walk_depth=2,
                                     check_deadlock=False))
    assert r.verdict == "incomplete"  # (no walk stops short: every one is cut at 2 states)
    lazy.edges[2] = []
    r = explore(lazy, ExploreOptions(strategy="simulate", temporal=("Zero",), walks=5, walk_depth=4,
                                     check_deadlock=False))
    (v,) = r.violations
    assert [t.state[0] for t in v.trace] == [3, 2] and v.loop == 1


def test_a_repeating_walk_is_a_lasso_and_its_stem_loops_are_erased():
    # 1 (P) ~> 4 (Q, unreachable): the walks close the cycle 0 -> 1 -> 0 or, after b, 2 -> 3 -> 2;
    # both take a (WF), so both are fair violations, with stems of any length before them
    edges = {0: [("a", 1)], 1: [("a", 0), ("b", 2)], 2: [("a", 3)], 3: [("a", 2)]}
    prop = leads_to("L", "", lambda s: s[0] == 1, lambda s: s[0] == 4)
    m = GraphMachine(edges, fair=[WF("a")], temporal=[prop])
    found = []
    for seed in range(20):
        r = explore(m, ExploreOptions(strategy="simulate", temporal=("L",), walks=3, walk_depth=30, seed=seed,
                                      check_deadlock=False))
        for v in r.violations:
            assert_fair_violating_lasso(m, prop, v)
            found.append(([t.state[0] for t in v.trace], v.loop))
    assert {tuple(sorted(set(f[loop - 1:]))) for f, loop in found} == {(0, 1), (2, 3)}
    assert all(len(set(f[:loop])) == loop for f, loop in found)  # loop-free stems


def test_always_eventually_on_walks_and_a_liveness_only_run_is_simulated():
    edges = {0: [("a", 1)], 1: [("a", 0), ("b", 2)], 2: [("b", 2)]}
    prop = always_eventually("Often0", "", lambda s: s[0] == 0)
    m = GraphMachine(edges, fair=[WF("b")], temporal=[prop])
    r = explore(m, ExploreOptions(strategy="simulate", temporal=("Often0",), properties=(), check_deadlock=False,
                                  walks=10, walk_depth=20))
    assert r.strategy == "simulate" and r.verdict == "violated"
    (v,) = r.violations
    assert_fair_violating_lasso(m, prop, v)
    assert v.trace[-1].state == (2,) and v.trace[v.loop - 1].state == (2,)
