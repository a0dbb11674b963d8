"""The SCC-based checker against a brute-force reference on random labelled graphs.

Reference: a violation exists iff some set S of "bad forever" states, reachable after a trigger
inside the bad region, is strongly connected (networkx; a single state always is: it stutters)
and fair when every edge inside S is taken: for WF(a), a is taken in S or disabled at some state
of S; for SF(a), a is taken in S or disabled at all of S. Every subset is tried, so this shares
nothing with the Streett refinement it checks. The shortest stem is compared with the distance to
the nearest state of such an S in the before/after-trigger product graph.
"""

from __future__ import annotations

import itertools

import networkx as nx
from eoscheck.checker.liveness import (
    SF,
    WF,
    always_eventually,
    check_liveness,
    eventually,
    leads_to,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.liveness_graphs import GraphMachine

ACTIONS = ("a", "b", "c")


@st.composite
def cases(draw):
    n = draw(st.integers(1, 6))
    edges = {u: draw(st.lists(st.tuples(st.sampled_from(ACTIONS), st.integers(0, n - 1)), max_size=3))
             for u in range(n)}
    p = draw(st.sets(st.integers(0, n - 1)))
    q = draw(st.sets(st.integers(0, n - 1)))
    kinds = draw(st.lists(st.sampled_from(["WF", "SF"]), min_size=0, max_size=3))
    fair = [(WF if k == "WF" else SF)(ACTIONS[i]) for i, k in enumerate(kinds)]
    form = draw(st.sampled_from(["eventually", "leads_to", "always_eventually"]))
    return n, edges, p, q, fair, form


def reference(n, edges, p, q, fair, form):
    enabled = {u: {a for a, _ in edges[u]} for u in range(n)}
    if form == "leads_to":
        bad = {u for u in range(n) if u not in q}
        triggers = {u for u in bad if u in p}
    else:
        bad = {u for u in range(n) if u not in p}
        triggers = bad if form == "always_eventually" else ({0} & bad)
    full = nx.DiGraph()
    full.add_nodes_from(range(n))
    full.add_edges_from((u, v) for u in range(n) for _, v in edges[u])
    reach = nx.descendants(full, 0) | {0}
    # product: (u, 0) before the trigger, (u, 1) after it, inside bad
    prod = nx.DiGraph()
    for u in range(n):
        for _, v in edges[u]:
            prod.add_edge((u, 0), (v, 0))
            if u in bad and v in bad:
                prod.add_edge((u, 1), (v, 1))
        prod.add_node((u, 0))
        prod.add_node((u, 1))
    start = (0, 1) if form == "eventually" else (0, 0)
    if form != "eventually":
        for t in triggers:
            prod.add_edge((t, 0), (t, 1), weight=0)
    for e in prod.edges:
        prod.edges[e].setdefault("weight", 1)
    if form == "eventually" and 0 not in bad:
        return None
    dist = nx.single_source_dijkstra_path_length(prod, start)
    best = None
    for size in range(1, n + 1):
        for s in itertools.combinations(sorted(bad & reach), size):
            sub = set(s)
            if len(sub) > 1 and not nx.is_strongly_connected(full.subgraph(sub)):
                continue
            taken = {a for u in sub for a, v in edges[u] if v in sub}
            ok = True
            for f in fair:
                (a,) = f.actions
                on = [a in enabled[u] for u in sub]
                if f.kind == "WF" and a not in taken and all(on):
                    ok = False
                if f.kind == "SF" and a not in taken and any(on):
                    ok = False
            if ok:
                d = min((dist[(u, 1)] for u in sub if (u, 1) in dist), default=None)
                if d is not None and (best is None or d < best):
                    best = d
    return best


def is_stutter(v) -> bool:
    """A lasso whose last state is followed by itself without a step (see Violation.loop)."""
    states = [t.state for t in v.trace]
    return v.loop == len(states) - 1 and (v.loop == 0 or states[v.loop - 1] != states[-1])


def fair_cycle(v, edges, fair):
    if is_stutter(v):
        loop_states, taken = [v.trace[-1].state[0]], set()
    else:
        loop_states = [t.state[0] for t in v.trace[v.loop:]]
        taken = {t.step[0] for t in v.trace[v.loop:]}
    for f in fair:
        (a,) = f.actions
        on = [any(x == a for x, _ in edges[u]) for u in loop_states]
        if f.kind == "WF" and a not in taken and all(on):
            return False
        if f.kind == "SF" and a not in taken and any(on):
            return False
    return True


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_matches_brute_force(case):
    n, edges, p, q, fair, form = case
    make = {"eventually": lambda: eventually("X", "", lambda s: s[0] in p),
            "leads_to": lambda: leads_to("X", "", lambda s: s[0] in p, lambda s: s[0] in q),
            "always_eventually": lambda: always_eventually("X", "", lambda s: s[0] in p)}[form]
    machine = GraphMachine(edges, fair=fair, temporal=[make()])
    result = check_liveness(machine, ["X"], symmetry=False)
    expected = reference(n, edges, p, q, fair, form)
    assert (result.verdict == "violated") == (expected is not None), (result.verdict, expected)
    if expected is None:
        return
    v = result.violations[0]
    # a real lasso: steps of the machine, last state followed by trace[loop]
    states = [t.state[0] for t in v.trace]
    for prev, cur in zip(v.trace, v.trace[1:]):
        assert (cur.step[0], cur.state[0]) in edges[prev.state[0]]
    assert 0 <= v.loop <= len(states) - 1
    if not is_stutter(v):
        assert v.loop >= 1 and states[v.loop - 1] == states[-1]
    assert fair_cycle(v, edges, fair)
    # the stem is shortest: it ends where the cycle starts
    stem_len = v.loop if is_stutter(v) else v.loop - 1
    assert stem_len == expected


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n),
    st.sets(st.integers(0, n - 1)))))
def test_tarjan_matches_networkx(case):
    from array import array

    from eoscheck.checker.liveness.scc import tarjan

    n, pairs, removed = case
    pairs.sort()
    offsets = array("q", [0] * (n + 1))
    for u, _ in pairs:
        offsets[u + 1] += 1
    for u in range(n):
        offsets[u + 1] += offsets[u]
    targets = array("i", [v for _, v in pairs])
    inside = bytearray(0 if u in removed else 1 for u in range(n))
    comps: list[frozenset[int]] = []
    order: list[int] = []

    def emit(comp: list[int]) -> bool:
        comps.append(frozenset(comp))
        order.extend(comp)
        return False

    tarjan(offsets, targets, inside, range(n), emit)
    g = nx.DiGraph()
    g.add_nodes_from(u for u in range(n) if inside[u])
    g.add_edges_from((u, v) for u, v in pairs if inside[u] and inside[v])
    assert sorted(map(sorted, comps)) == sorted(map(sorted, nx.strongly_connected_components(g)))
    # reverse topological order: no component reaches one emitted after it
    position = {c: i for i, c in enumerate(comps)}
    of = {u: c for c in comps for u in c}
    for u, v in g.edges:
        assert position[of[u]] >= position[of[v]]


PARAM_ACTIONS = ("a:0", "a:1", "b:0", "b:1")


@st.composite
def split_cases(draw):
    n = draw(st.integers(1, 5))
    edges = {u: draw(st.lists(st.tuples(st.sampled_from(PARAM_ACTIONS), st.integers(0, n - 1)), max_size=3))
             for u in range(n)}
    p = draw(st.sets(st.integers(0, n - 1)))
    kinds = draw(st.tuples(st.sampled_from(["WF", "SF"]), st.sampled_from(["WF", "SF"])))
    return n, edges, p, kinds


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split_cases())
def test_fairness_split_per_instance_matches_brute_force(case):
    # "a" is fair per parameter (a:0 and a:1 are two constraints), "b" as one action over both
    n, edges, p, (ka, kb) = case
    make = {"WF": WF, "SF": SF}
    fair = [make[ka]("a", per=lambda step: step[1]), make[kb]("b")]
    machine = GraphMachine(edges, fair=fair, temporal=[eventually("X", "", lambda s: s[0] in p)])
    result = check_liveness(machine, ["X"], symmetry=False)
    # the reference sees the instances as separate actions "a:0", "a:1" and "b" for both b's
    flat = {u: [(x if x.startswith("a") else "b", v) for x, v in out] for u, out in edges.items()}
    ref_fair = [make[ka]("a:0"), make[ka]("a:1"), make[kb]("b")]
    expected = reference(n, flat, p, set(), ref_fair, "eventually")
    assert (result.verdict == "violated") == (expected is not None)
    if expected is not None:
        v = result.violations[0]
        assert (v.loop if is_stutter(v) else v.loop - 1) == expected
