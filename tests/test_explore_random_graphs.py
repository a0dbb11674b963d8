"""Engines against networkx on random finite transition systems (an independent oracle).

Each generated machine is a random directed graph: reachable states, BFS depth and shortest
counterexample lengths are computed by networkx and must match the engines exactly.
"""

from __future__ import annotations

from collections.abc import Mapping

import networkx as nx
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.machine import Machine, Property
from eoscheck.checker.trace import trace_is_valid
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


class GraphMachine(Machine):
    actions: Mapping[str, tuple[str, ...]] = {"Go": ("to",)}

    def __init__(self, n, edges, inits, bad):
        self.n, self.inits, self.bad = n, inits, bad
        self.out = {i: [t for s, t in edges if s == i] for i in range(n)}

    def init_states(self):
        return [(i,) for i in self.inits]

    def successors(self, s):
        return [(("Go", t), (t,)) for t in self.out[s[0]]]

    def properties(self):
        return {"Good": Property("Good", "never in a bad node", "invariant", lambda s: s[0] not in self.bad)}

    def fields(self, s):
        return {"node": s[0]}


@st.composite
def graphs(draw):
    n = draw(st.integers(2, 25))
    node = st.integers(0, n - 1)
    edges = draw(st.lists(st.tuples(node, node), max_size=3 * n))
    inits = draw(st.lists(node, min_size=1, max_size=3))
    bad = frozenset(draw(st.lists(node, max_size=3)))
    return n, edges, inits, bad


def reference(n, edges, inits):
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    dist: dict[int, int] = {}
    for i in inits:
        for v, d in nx.single_source_shortest_path_length(g, i).items():
            dist[v] = min(d, dist.get(v, d))
    return g, dist


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_engines_agree_with_networkx(case):
    n, edges, inits, bad = case
    machine = GraphMachine(n, edges, inits, bad)
    g, dist = reference(n, edges, inits)
    reachable_bad = [v for v in dist if v in bad]
    shortest_bad = min((dist[v] + 1 for v in reachable_bad), default=None)
    dead = [v for v in dist if g.out_degree(v) == 0]
    shortest_dead = min((dist[v] + 1 for v in dead), default=None)
    generated = len(inits) + sum(len(machine.out[v]) for v in dist)  # duplicate edges count twice

    # complete exploration without properties or deadlock: the exact reachable set
    plain = ExploreOptions(properties=(), check_deadlock=False)
    for strategy in ("bfs", "dfs"):
        r = explore(machine, ExploreOptions(**{**plain.__dict__, "strategy": strategy}))
        assert r.verdict == "holds"
        assert r.stats.distinct == len(dist)
        assert r.stats.generated == generated
    assert explore(machine, plain).stats.depth == max(dist.values()) + 1

    # the shortest invariant violation (BFS exact; DFS after shortening, which fits the budget)
    for strategy in ("bfs", "dfs"):
        r = explore(machine, ExploreOptions(strategy=strategy, check_deadlock=False))
        if shortest_bad is None:
            assert r.verdict == "holds"
        else:
            (v,) = r.violations
            assert v.length == shortest_bad and v.length <= v.found_length
            assert v.trace[-1].state[0] in bad and trace_is_valid(machine, v.trace)

    # simulation: never "holds"; whatever it finds is real and shortened to the minimum
    r = explore(machine, ExploreOptions(strategy="simulate", check_deadlock=False, walks=20, walk_depth=30))
    assert r.verdict in ("violated", "incomplete")
    for v in r.violations:
        assert shortest_bad is not None and v.length == shortest_bad
        assert trace_is_valid(machine, v.trace) and v.found_length >= v.length

    # the shortest deadlock
    r = explore(machine, ExploreOptions(properties=()))
    if shortest_dead is None:
        assert r.verdict == "holds"
    else:
        (v,) = r.violations
        assert v.kind == "deadlock" and v.length == shortest_dead
        assert trace_is_valid(machine, v.trace)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.integers(1, 6))
def test_depth_bounds_agree_with_networkx(case, bound):
    n, edges, inits, bad = case
    machine = GraphMachine(n, edges, inits, bad)
    _, dist = reference(n, edges, inits)
    within = sum(1 for d in dist.values() if d < bound)
    cut = max(dist.values()) + 1 > bound
    for strategy in ("bfs", "dfs"):
        r = explore(machine, ExploreOptions(strategy=strategy, properties=(), check_deadlock=False,
                                            max_depth=bound))
        assert r.stats.distinct == within, strategy
        assert r.verdict == ("incomplete" if cut else "holds"), strategy
        assert r.limit_hit == ("depth" if cut else None), strategy


def test_depth_bound_reexpands_an_initial_state_first_reached_deeper():
    """Initial state 1 is first reached at depth 3 from initial state 0; as an initial state it is at
    depth 1, so its successor 3 (depth 2) is within a bound of 3 (Hypothesis found this)."""
    edges = [(0, 2), (2, 1), (1, 3)]
    machine = GraphMachine(4, edges, [0, 1], frozenset())
    r = explore(machine, ExploreOptions(strategy="dfs", properties=(), check_deadlock=False, max_depth=3))
    assert r.stats.distinct == 4 and r.verdict == "holds"
