"""Liveness on textbook graphs with known answers: fair and unfair cycles, WF against SF,
the lasso's shape, the shortest stem, stuttering, and symmetry."""

from __future__ import annotations

import pytest
from eoscheck.checker.liveness import (
    SF,
    WF,
    LivenessError,
    always_eventually,
    check_liveness,
    eventually,
    leads_to,
)

from tests.liveness_graphs import GraphMachine


def at(*nodes: int):
    wanted = set(nodes)
    return lambda s: s[0] in wanted


def run(machine, name: str = "P"):
    result = check_liveness(machine, [name])
    return result, (result.violations[0] if result.violations else None)


def nodes(v) -> list[int]:
    return [t.state[0] for t in v.trace]


def test_unfair_cycle_is_no_counterexample_but_fair_one_is():
    # 0 -> 1 (Go) reaches the goal; 0 <-> 2 (Spin/Back) cycles forever without it.
    edges = {0: [("Go", 1), ("Spin", 2)], 2: [("Back", 0)], 1: []}
    prop = eventually("P", "reach 1", at(1))
    # WF(Go): Go is enabled at 0 but disabled at 2, so the 0-2 cycle is weakly fair: violated.
    _, v = run(GraphMachine(edges, fair=[WF("Go"), WF("Spin", "Back")], temporal=[prop]))
    assert v is not None and nodes(v) == [0, 2, 0] and v.loop == 1
    # SF(Go): Go is enabled infinitely often on the cycle and never taken: unfair, so it holds.
    result, v = run(GraphMachine(edges, fair=[SF("Go"), WF("Spin", "Back")], temporal=[prop]))
    assert v is None and result.verdict == "holds"


def test_without_fairness_stuttering_violates_eventually():
    edges = {0: [("Go", 1)], 1: []}
    prop = eventually("P", "reach 1", at(1))
    _, v = run(GraphMachine(edges, temporal=[prop]))
    assert v is not None and nodes(v) == [0] and v.loop == 0  # stutters in the initial state
    result, v = run(GraphMachine(edges, fair=[WF("Go")], temporal=[prop]))
    assert v is None and result.verdict == "holds"


def test_lasso_shape_and_shortest_stem():
    # A long way (0-1-2-3-4) and a short way (0-5-4) into the bad cycle 4 -> 6 -> 4; 7 is the goal,
    # reachable only from 1 by an action nobody must take.
    edges = {0: [("A", 1), ("A", 5)], 1: [("A", 2), ("Maybe", 7)], 2: [("A", 3)], 3: [("A", 4)],
             5: [("A", 4)], 4: [("A", 6)], 6: [("A", 4)], 7: [("A", 7)]}
    prop = eventually("P", "reach 7", at(7))
    _, v = run(GraphMachine(edges, fair=[WF("A")], temporal=[prop]))
    assert v is not None
    assert nodes(v) == [0, 5, 4, 6, 4]  # stem 0-5-4 (shortest), cycle 4-6-4
    assert v.loop == 3  # the last state (4) is followed by trace[3] (6)
    assert v.trace[v.loop - 1].state == v.trace[-1].state
    assert [t.step[0] for t in v.trace[1:]] == ["A"] * 4


def test_leads_to_triggers_anywhere_and_counts_the_trigger_state():
    # request at 2 (P), granted at 4 (Q); from 2 the fair path may loop 2 <-> 3 without granting.
    edges = {0: [("Tick", 1)], 1: [("Req", 2)], 2: [("Wait", 3), ("Grant", 4)], 3: [("Wait", 2)],
             4: [("Tick", 0)]}
    prop = leads_to("P", "requests are granted", at(2), at(4))
    _, v = run(GraphMachine(edges, fair=[WF("Tick", "Req", "Wait")], temporal=[prop]))
    assert v is not None and nodes(v)[:3] == [0, 1, 2] and set(nodes(v)[2:]) <= {2, 3}
    assert v.loop is not None and v.trace[v.loop - 1].state == v.trace[-1].state
    # Grant under strong fairness: enabled at 2 infinitely often, so it must be taken.
    result, v = run(GraphMachine(edges, fair=[WF("Tick", "Req", "Wait"), SF("Grant")], temporal=[prop]))
    assert v is None and result.verdict == "holds"
    # ... weak fairness is not enough: Grant is disabled at 3 on every round.
    _, v = run(GraphMachine(edges, fair=[WF("Tick", "Req", "Wait"), WF("Grant")], temporal=[prop]))
    assert v is not None


def test_always_eventually_fails_on_a_late_cycle():
    # 1 is visited once, then the behaviour cycles 2 <-> 3 forever.
    edges = {0: [("A", 1)], 1: [("A", 2)], 2: [("A", 3)], 3: [("A", 2)]}
    prop = always_eventually("P", "1 infinitely often", at(1))
    _, v = run(GraphMachine(edges, fair=[WF("A")], temporal=[prop]))
    assert v is not None and nodes(v) == [0, 1, 2, 3, 2] and v.loop == 3
    # ... while eventually(1) holds on the same graph
    ev = eventually("E", "1 once", at(1))
    result = check_liveness(GraphMachine(edges, fair=[WF("A")], temporal=[ev]), ["E"])
    assert result.verdict == "holds"


def test_strong_fairness_refinement_finds_the_fair_sub_cycle():
    # SCC {0, 1, 2}: B is enabled only at 2 and never taken; the sub-cycle 0 <-> 1 avoids 2, so it
    # is strongly fair; eventually(3) is violated on it.
    edges = {0: [("A", 1), ("A", 2)], 1: [("A", 0)], 2: [("A", 0), ("B", 2)], 3: []}
    edges[2] = [("A", 0), ("B", 3)]
    prop = eventually("P", "reach 3", at(3))
    _, v = run(GraphMachine(edges, fair=[WF("A"), SF("B")], temporal=[prop]))
    assert v is not None and 2 not in nodes(v)[v.loop - 1:]
    # WF(B) with B continuously enabled only at 2: the whole SCC is weakly fair as well.
    _, v = run(GraphMachine(edges, fair=[WF("A"), WF("B")], temporal=[prop]))
    assert v is not None


def test_a_fairness_action_enabled_only_outside_the_bounds_still_counts_as_enabled():
    class Bounded(GraphMachine):
        def within_bounds(self, s: tuple) -> bool:
            return s[0] != 9

    prop = eventually("P", "reach 1", at(1))
    m = Bounded({0: [("Out", 9), ("Go", 1)], 9: []}, fair=[WF("Out")], temporal=[prop])
    result = check_liveness(m, ["P"])
    # stuttering at 0 would starve Out, which is enabled (its step leaves the bounds): no lasso
    assert result.verdict == "holds"


def test_graph_and_lasso_take_their_successors_from_the_expansion_core(monkeypatch):
    from eoscheck.checker.explore.expand import Expander

    calls: list[tuple] = []
    real = Expander.expand_one

    def spy(self, state, *args, **kwargs):
        calls.append((state, kwargs.get("out_of_bounds", False)))
        return real(self, state, *args, **kwargs)

    monkeypatch.setattr(Expander, "expand_one", spy)
    edges = {0: [("Go", 1), ("Spin", 2)], 2: [("Back", 0)], 1: []}
    m = GraphMachine(edges, fair=[WF("Go"), WF("Spin", "Back")], temporal=[eventually("P", "reach 1", at(1))])
    v = check_liveness(m, ["P"]).violations[0]
    assert [t.state[0] for t in v.trace] == [0, 2, 0]
    # every state of the graph expanded once with the out-of-bounds steps (enabledness), then the
    # lasso re-executed step by step without them
    assert sorted(s[0] for s, oob in calls if oob) == [0, 1, 2]
    assert [s[0] for s, oob in calls if not oob] == [0, 2]


def test_unknown_name_is_one_line():
    m = GraphMachine({0: []}, temporal=[eventually("P", "", at(0))])
    with pytest.raises(LivenessError, match="unknown temporal property 'Q'; valid temporal properties: P"):
        check_liveness(m, ["Q"])


def test_incomplete_graph_is_not_a_verdict():
    edges = {i: [("A", i + 1)] for i in range(50)}
    m = GraphMachine(edges, fair=[WF("A")], temporal=[eventually("P", "", at(50))])
    result = check_liveness(m, ["P"], max_states=10)
    assert result.verdict == "incomplete" and not result.violations
    result = check_liveness(m, ["P"], max_depth=20)
    assert result.verdict == "incomplete" and result.limit_hit == "depth"
    assert "needs the whole graph" in result.notes[-1]
    assert check_liveness(m, ["P"], max_depth=60).verdict == "holds"  # 51 levels fit: A reaches 50


def test_deep_chain_needs_no_recursion():
    n = 200_000
    edges = {i: [("A", i + 1)] for i in range(n)}
    edges[n] = [("A", n - 1)]
    m = GraphMachine(edges, fair=[WF("A")], temporal=[eventually("P", "", at(-1))])
    result = check_liveness(m, ["P"])
    v = result.violations[0]
    assert len(v.trace) == n + 2 and v.loop == n  # stem 0..n-1, cycle n-1 -> n -> n-1
