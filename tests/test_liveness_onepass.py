"""Safety and liveness in one BFS (``checker.liveness.onepass``) against the two passes it replaces
(the BFS engine, then the liveness graph): the same verdict, figures, findings and traces, on every
liveness spec and on random machines with safety violations, deadlocks, bounds and limits."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from eoscheck.checker.explore import ExploreOptions, _dispatch, bfs, explore
from eoscheck.checker.liveness import SF, WF, LivenessError, always_eventually, eventually, leads_to
from eoscheck.checker.liveness.run import explore_with_liveness
from eoscheck.checker.machine import Property
from eoscheck.checker.registry import find_model
from eoscheck.checker.result import Result
from eoscheck.checker.spec import build_machine, load_spec, spec_to_options
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.liveness_graphs import GraphMachine
from tests.test_liveness_integration import SymmetricGrid

REPO = Path(__file__).resolve().parents[1]
SPECS = REPO / "specs"


def liveness_specs() -> list[Path]:
    """Every committed spec that names a temporal property."""
    out = []
    for path in sorted(SPECS.rglob("*.toml")):
        spec = load_spec(path)
        if spec.check.properties and set(spec.check.properties) & set(find_model(spec.model).temporal):
            out.append(path)
    return out


def outcome(r: Result) -> tuple:
    """All a run reports but its times (the liveness line names them)."""
    s = r.stats
    return (r.verdict, r.strategy, r.limit_hit, s.distinct, s.generated, s.depth, s.queue, s.coverage,
            s.observed_collision,
            [(v.property, v.kind, v.trace, v.loop, v.found_length, v.shortened_by) for v in r.violations],
            [n for n in r.notes if not n.startswith("liveness:")])


#: BFS runs of the committed specs' machines, which the BFS, parallel and DFS tests below each compare with: the BFS
#: is the reference, so it is run once per machine, options and pass count (liveness-eos-beta-kip447's 329k states
#: were walked about twenty times a run, a third of the slow tests' time); other engines' runs are never cached
_BFS_RUNS: dict[tuple[int, ExploreOptions, bool], Result] = {}


def run_liveness(machine: Any, options: ExploreOptions, one_pass: bool = True) -> Result:
    if options.strategy != "bfs" or id(machine) not in _CACHED_MACHINES:
        return explore_with_liveness(machine, options, None, _dispatch, one_pass=one_pass)
    key = (id(machine), options, one_pass)
    if key not in _BFS_RUNS:
        _BFS_RUNS[key] = explore_with_liveness(machine, options, None, _dispatch, one_pass=one_pass)
    return _BFS_RUNS[key]


def both(machine: Any, options: ExploreOptions) -> tuple[Result, Result]:
    return run_liveness(machine, options), run_liveness(machine, options, one_pass=False)


def assert_same(machine: Any, options: ExploreOptions) -> Result:
    one, two = both(machine, options)
    assert outcome(one) == outcome(two)
    return one


# ------------------------------------------------------------------------------ committed specs


SLOW = {"liveness-eos-beta-kip447", "liveness-lso-advances-kafka-2.4", "liveness-lso-stuck-kafka-0.11"}
#: 329k states: the parallel and DFS tests check it with its committed options only; the BFS test checks it with
#: every safety property and deadlock too, and the smaller specs check that for every engine
HUGE = {"liveness-eos-beta-kip447"}


SPEC_PARAMS = [pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem in SLOW else [])
               for p in liveness_specs()]


#: spec path -> its machine, built once so that ``_BFS_RUNS`` can key on it (the machines keep no run's state)
_CACHED_MACHINES: dict[int, Any] = {}
_MACHINES: dict[Path, Any] = {}


def _spec_runs(path):
    """The spec's machine, its options as committed, and the same with every safety property and
    deadlock checked too (a safety violation then stops several of them before the liveness check)."""
    spec = load_spec(path)
    options = spec_to_options(spec)
    if path not in _MACHINES:
        _MACHINES[path] = build_machine(spec)
        _CACHED_MACHINES[id(_MACHINES[path])] = _MACHINES[path]
    return _MACHINES[path], options, dataclasses.replace(options, properties=None, check_deadlock=True)


def test_the_liveness_specs_are_found():
    names = {p.stem for p in liveness_specs()}
    assert SLOW | {"liveness-init-exhausted-epoch-shipped", "liveness-idempotent-sends-complete"} <= names


@pytest.mark.parametrize("path", SPEC_PARAMS)
def test_every_liveness_spec_one_pass_equals_two(path):
    machine, options, every = _spec_runs(path)
    assert_same(machine, options)
    assert_same(machine, every)
    if path.stem not in SLOW:  # (a minute more under load)
        assert_same(machine, dataclasses.replace(every, stop_at_first=False))


def test_kafka_safety_violation_before_liveness_is_the_engines():
    spec = load_spec(SPECS / "liveness-lso-stuck-kafka-0.11.toml")
    machine = build_machine(spec)
    options = dataclasses.replace(spec_to_options(spec), properties=None)
    one = assert_same(machine, options)
    assert one.verdict == "violated" and [v.kind for v in one.violations] == ["invariant"]
    assert one.violations[0].trace == explore(machine, dataclasses.replace(options, temporal=())).violations[0].trace


# ---------------------------------------------------------------------------- random machines


class SafetyGraph(GraphMachine):
    """A labelled graph with two invariants (states to avoid), a transition property (steps to
    avoid), a state constraint and terminal states."""

    def __init__(self, edges: Mapping[int, list[tuple[str, int]]], init: list[int], bad1: set[int],
                 bad2: set[int], bad_steps: set[tuple[int, int]], outside: set[int], terminal: set[int],
                 fair: list, temporal: list):
        super().__init__(edges, init=init, fair=fair, temporal=temporal)
        self.bad1, self.bad2, self.bad_steps = bad1, bad2, bad_steps
        self.outside, self.terminal = outside, terminal

    def properties(self) -> Mapping[str, Property]:
        return {
            "Inv1": Property("Inv1", "", "invariant", lambda s: s[0] not in self.bad1),
            "Step": Property("Step", "", "transition", lambda s, _step, t: (s[0], t[0]) not in self.bad_steps),
            "Inv2": Property("Inv2", "", "invariant", lambda s: s[0] not in self.bad2),
        }

    def within_bounds(self, state: tuple) -> bool:
        return state[0] not in self.outside

    def is_terminal(self, state: tuple) -> bool:
        return state[0] in self.terminal


@st.composite
def safety_cases(draw):
    n = draw(st.integers(1, 14))
    node = st.integers(0, n - 1)
    edges = {u: draw(st.lists(st.tuples(st.sampled_from(("a", "b", "c")), node), max_size=4)) for u in range(n)}
    init = draw(st.lists(node, min_size=1, max_size=3))
    subset = st.sets(node, max_size=3)
    bad_steps = draw(st.sets(st.tuples(node, node), max_size=3))
    p, q = draw(st.sets(node)), draw(st.sets(node))
    form = draw(st.sampled_from(["eventually", "leads_to", "always_eventually"]))
    prop = {"eventually": eventually("X", "", lambda s: s[0] in p),
            "leads_to": leads_to("X", "", lambda s: s[0] in p, lambda s: s[0] in q),
            "always_eventually": always_eventually("X", "", lambda s: s[0] in p)}[form]
    fair = [draw(st.sampled_from([WF, SF]))(a) for a in draw(st.sets(st.sampled_from(("a", "b", "c"))))]
    machine = SafetyGraph(edges, init, draw(subset), draw(subset), bad_steps, draw(subset), draw(subset),
                          fair, [prop])
    options = ExploreOptions(
        properties=draw(st.sampled_from([None, ("Inv2",), ("Step",), ()])),
        check_deadlock=draw(st.booleans()), stop_at_first=draw(st.booleans()),
        max_states=draw(st.sampled_from([None, None, 1, 3, 6])),
        max_depth=draw(st.sampled_from([None, None, 1, 2, 4])), temporal=("X",))
    return machine, options, draw(st.sampled_from([1, 2, 3, 2048]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(safety_cases())
def test_random_machines_one_pass_equals_two(case):
    machine, options, chunk = case
    saved = bfs.CHUNK
    bfs.CHUNK = chunk  # small chunks: which state a chunk's invariant check names first matters
    try:
        assert_same(machine, options)
    finally:
        bfs.CHUNK = saved


def test_chunks_decide_which_invariant_is_reported_first(monkeypatch):
    # 0's successors 1 (breaks Inv2) and 2 (breaks Inv1) are new in one chunk: the engine checks a
    # chunk's new states property by property, so Inv1 (first in the machine's order) is reported
    never = [eventually("X", "", lambda s: True)]
    options = ExploreOptions(temporal=("X",))
    m = SafetyGraph({0: [("a", 1), ("b", 2)]}, [0], {2}, {1}, set(), set(), {1, 2}, [WF("a")], never)
    assert [v.property for v in assert_same(m, options).violations] == ["Inv1"]
    # found by two parents, 5 and 6: one chunk as above, or (a chunk per parent) 1's Inv2 first
    edges = {0: [("a", 5), ("b", 6)], 5: [("a", 1)], 6: [("a", 2)]}
    m = SafetyGraph(edges, [0], {2}, {1}, set(), set(), {1, 2}, [WF("a")], never)
    assert [v.property for v in assert_same(m, options).violations] == ["Inv1"]
    monkeypatch.setattr(bfs, "CHUNK", 1)
    one = assert_same(m, options)
    assert [v.property for v in one.violations] == ["Inv2"]
    assert [t.state[0] for t in one.violations[0].trace] == [0, 5, 1]


def _dispatched(monkeypatch) -> list[str]:
    """The strategies the engine dispatcher is asked to run from now on (a second pass shows here)."""
    calls: list[str] = []
    real = _dispatch

    def spy(machine, options, progress):
        calls.append(options.strategy)
        return real(machine, options, progress)

    monkeypatch.setattr("eoscheck.checker.explore._dispatch", spy)
    return calls


def _fair_cycle() -> SafetyGraph:
    """0 -> 1 -> 2 -> 0 under WF(a): every fair behaviour reaches 2."""
    edges = {0: [("a", 1)], 1: [("a", 2)], 2: [("a", 0)]}
    return SafetyGraph(edges, [0], set(), set(), set(), set(), set(), [WF("a")],
                       [eventually("X", "", lambda s: s[0] == 2)])


def test_one_pass_explores_once(monkeypatch):
    calls = _dispatched(monkeypatch)
    m = _fair_cycle()
    result = explore(m, ExploreOptions(temporal=("X",)))
    assert result.verdict == "holds" and result.strategy == "bfs" and calls == []
    assert "in the safety BFS (one pass)" in result.notes[-1]
    result = explore(m, ExploreOptions(strategy="dfs", temporal=("X",)))
    assert result.verdict == "holds" and result.strategy == "dfs" and calls == []
    assert "in the safety DFS (one pass)" in result.notes[-1]


def test_symmetry_one_pass_equals_two():
    for goal in (lambda s: s[0] + s[1] >= 1, lambda s: s[0] + s[1] == 3):
        prop = eventually("P", "", goal)
        for sym in (True, False):
            assert_same(SymmetricGrid(prop), ExploreOptions(temporal=("P",), symmetry=sym))


def test_refusal_keeps_the_two_pass_order():
    # the liveness check refuses (a predicate not constant on orbits) when the walk expands (2, 0)
    # at depth 3; NotCorner breaks at (2, 2), deeper: the engine's violation still wins, as when
    # the engine ran first, and without it the run is refused
    grid = SymmetricGrid(eventually("P", "x reaches 2", lambda s: s[0] == 2))
    with pytest.raises(LivenessError, match="symmetry orbit"):
        explore(grid, ExploreOptions(temporal=("P",), properties=(), check_deadlock=True))
    options = ExploreOptions(temporal=("P",), check_deadlock=False)
    one, two = both(grid, options)
    assert outcome(one) == outcome(two) and one.violations[0].property == "NotCorner"
    assert explore(grid, options).violations[0].trace[-1].state == (2, 2)


# ------------------------------------------------------------------- the parallel engine: one pass


def with_engine(r: Result, strategy: str) -> tuple:
    """``outcome`` with the strategy replaced and the engine's own notes (where its levels ran)
    dropped: what must equal between the parallel engine's one pass and the BFS's."""
    out = list(outcome(dataclasses.replace(r, strategy=strategy)))
    out[-1] = [n for n in out[-1] if not n.startswith(("parallel:", "all "))]
    return tuple(out)


def assert_parallel_is_bfs(machine: Any, options: ExploreOptions) -> Result:
    """The parallel engine's one pass reports what the BFS's two passes do (and so its one pass),
    and says where it ran."""
    par = dataclasses.replace(options, strategy="parallel")
    one = explore_with_liveness(machine, par, None, _dispatch)
    two = run_liveness(machine, dataclasses.replace(options, strategy="bfs"), one_pass=False)
    assert with_engine(one, "bfs") == with_engine(two, "bfs")
    wants_safety = options.properties is None or bool(options.properties) or options.check_deadlock
    if wants_safety:  # (a liveness-only run is the liveness walk whatever the engine)
        assert one.strategy == "parallel"
        assert any(n.startswith("parallel: no worker process started") for n in one.notes)
    return one


@pytest.mark.parametrize("path", SPEC_PARAMS)
def test_every_liveness_spec_parallel_one_pass_equals_bfs(path):
    machine, options, every = _spec_runs(path)
    for opts in (options,) if path.stem in HUGE else (options, every):
        one = assert_parallel_is_bfs(machine, opts)
        # and the parallel engine's own two passes agree on what it does not document as differing
        # (which equally deep state ends a trace, per-action distinct coverage; when a safety
        # violation stops the run: which kind among equally short ones, and the counts)
        two = explore_with_liveness(machine, dataclasses.replace(opts, strategy="parallel"), None, _dispatch,
                                    one_pass=False)
        assert one.verdict == two.verdict
        assert [len(v.trace) for v in one.violations] == [len(v.trace) for v in two.violations]
        if all(v.kind == "temporal" for v in one.violations):
            assert (one.stats.distinct, one.stats.generated, one.stats.depth) == \
                (two.stats.distinct, two.stats.generated, two.stats.depth)
            assert [(v.property, v.loop) for v in one.violations] == [(v.property, v.loop) for v in two.violations]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(safety_cases())
def test_random_machines_parallel_one_pass_equals_bfs(case):
    machine, options, chunk = case
    saved = bfs.CHUNK
    bfs.CHUNK = chunk
    try:
        assert_parallel_is_bfs(machine, options)
    finally:
        bfs.CHUNK = saved


def test_parallel_one_pass_starts_no_engine(monkeypatch):
    calls = _dispatched(monkeypatch)
    result = explore(_fair_cycle(), ExploreOptions(strategy="parallel", temporal=("X",)))
    assert result.verdict == "holds" and result.strategy == "parallel" and calls == []
    assert "in the safety BFS (one pass)" in " ".join(result.notes)


# ------------------------------------------------------------------------------ runs with a view


class Hidden(SafetyGraph):
    """0 -Go-> 1 (the goal) and 0 -Flip-> 2 -Spin-> 2: the behaviour that flips then spins is fair
    (Go is not enabled at 2) and never reaches the goal. The view ``goal`` (reached the goal or
    not) merges 2 into 0, whose successors it keeps: on the view's graph every fair behaviour
    reaches the goal, so checking liveness there would miss the violation."""

    def __init__(self, default: str | None = None):
        super().__init__({0: [("Go", 1), ("Flip", 2)], 2: [("Spin", 2)]}, [0], set(), set(), set(), set(), {1},
                         [WF("Go"), WF("Spin")], [eventually("Goal", "", lambda s: s[0] == 1)])
        self.default_view = default  # type: ignore[misc]

    def views(self) -> Mapping[str, Any]:
        from eoscheck.checker.state_view import View
        return {"goal": View("goal", "reached the goal or not", lambda s: s[0] == 1)}


def test_a_view_would_hide_a_liveness_violation_so_the_graph_is_explored_without_it():
    from eoscheck.checker.explore.expand import Expander
    from eoscheck.checker.liveness.check import find_lasso
    from eoscheck.checker.liveness.graph import build_graph
    from eoscheck.checker.liveness.onepass import explore_bfs_with_liveness

    m = Hidden()
    plain = explore(m, ExploreOptions(temporal=("Goal",)))
    assert plain.verdict == "violated" and [t.state[0] for t in plain.violations[0].trace] == [0, 2, 2]
    # the view's graph (what one pass with the view would walk): two nodes, no violation
    goal = m.temporal["Goal"]
    viewed = build_graph(m, m.fair, [goal.p], expander=Expander(m, view="goal", check_deadlock=False,
                                                                  stop_at_first=False, no_properties=True))
    assert viewed.size == 2 and find_lasso(viewed, goal, viewed.marks[0], None) is None
    assert explore_bfs_with_liveness(m, ExploreOptions(temporal=("Goal",), view="none")).verdict == "violated"
    # a view in force (named, or the machine's default): the safety run is the view's, the
    # liveness graph is not, and the note says why there are two passes
    for machine, view in ((m, "goal"), (Hidden(default="goal"), None)):
        for strategy in ("bfs", "parallel", "dfs"):
            options = ExploreOptions(temporal=("Goal",), view=view, strategy=strategy)
            r = explore(machine, options)
            assert r.stats.distinct == 2 and r.view.startswith("goal")  # the view's safety run
            assert r.verdict == "violated" and r.violations[0].trace == plain.violations[0].trace
            assert "the view 'goal' is applied to the safety run only" in r.notes[-1]
            assert "could miss or invent a violation" in r.notes[-1]
            two = explore_with_liveness(machine, options, None, _dispatch, one_pass=False)
            assert outcome(r)[:-1] == outcome(two)[:-1]  # (notes: the workers' memory figures vary)
    # --view none turns the machine's default off: one pass, no view anywhere
    off = explore(Hidden(default="goal"), ExploreOptions(temporal=("Goal",), view="none"))
    assert off.view is None and off.stats.distinct == 3 and "(one pass)" in off.notes[-1]
    assert off.violations[0].trace == plain.violations[0].trace


def test_symmetry_image_check_finds_nothing_for_the_run():
    # (1, 1) has no successors. The walk compares each of its first states with its images,
    # expanding them; it once did so through the run's expander, which then reported this deadlock
    # at reference 0 (a one-state trace of the initial state) before the walk reached it.
    class Stuck(SymmetricGrid):
        def successors(self, s):
            if s != (1, 1):
                yield from super().successors(s)

    m = Stuck(eventually("P", "", lambda s: s[0] + s[1] >= 1))
    for props in ((), None):
        one = assert_same(m, ExploreOptions(temporal=("P",), properties=props, check_deadlock=True))
        assert [t.state for t in one.violations[0].trace] == [(0, 0), (1, 0), (1, 1)]


# ------------------------------------------------------------------------ the DFS engine: one pass


def graph_of(r: Result) -> str:
    """The liveness line's graph figures ("graph of N states and E edges, B bytes per state")."""
    (line,) = [n for n in r.notes if n.startswith("liveness: ") and "graph of" in n]
    return line[line.index("graph of"):line.index(" per state")]


def assert_dfs_same(machine: Any, options: ExploreOptions) -> Result:
    """The DFS one pass (the engine records the graph) reports what its two passes (the engine,
    then the BFS liveness walk) do: the DFS engine's own figures, findings and traces, and the
    same lassos, which are the BFS one pass's (same graph, same stem search)."""
    opts = dataclasses.replace(options, strategy="dfs")
    one, two = both(machine, opts)
    assert outcome(one) == outcome(two)
    wants_safety = options.properties is None or bool(options.properties) or options.check_deadlock
    if wants_safety and any("graph of" in n for n in two.notes):  # the liveness check ran
        assert any(n.endswith("s") and "in the safety DFS (one pass)" in n for n in one.notes)
        assert graph_of(one) == graph_of(two)  # same nodes, edges and bytes as the BFS walk's graph
        bfs_one = run_liveness(machine, dataclasses.replace(options, strategy="bfs"))
        assert [(v.property, v.trace, v.loop) for v in one.violations if v.kind == "temporal"] == \
            [(v.property, v.trace, v.loop) for v in bfs_one.violations if v.kind == "temporal"]
    return one


@pytest.mark.parametrize("path", SPEC_PARAMS)
def test_every_liveness_spec_dfs_one_pass_equals_two(path):
    machine, options, every = _spec_runs(path)
    assert_dfs_same(machine, options)
    if path.stem not in HUGE:
        assert_dfs_same(machine, every)
    if path.stem not in SLOW:
        assert_dfs_same(machine, dataclasses.replace(every, stop_at_first=False))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(safety_cases())
def test_random_machines_dfs_one_pass_equals_two(case):
    machine, options, _ = case  # (chunks are the BFS's; max_depth exercises the DFS's re-expansion)
    assert_dfs_same(machine, options)


def test_dfs_one_pass_with_a_depth_bound_resolves_states_found_again_shallower():
    # DFS reaches 3 first by 0-1-2-3 (depth 4, past the bound 3: cut), then by 0-3 (depth 2): the
    # run is complete, the edge 2 -> 3 recorded while 3 had no node still leads to it, and the
    # lasso 0 -> 3 -> 4 -> 3 (b not enabled at 4) is found
    edges = {0: [("a", 1), ("b", 3)], 1: [("a", 2)], 2: [("a", 3)], 3: [("a", 4)], 4: [("a", 3)]}
    m = SafetyGraph(edges, [0], set(), set(), set(), set(), {2}, [WF("a")],
                    [always_eventually("X", "", lambda s: s[0] in (1, 2))])
    for bound in (3, 4, None):
        one = assert_dfs_same(m, ExploreOptions(temporal=("X",), max_depth=bound, check_deadlock=True))
        assert one.limit_hit is None and one.verdict == "violated"
        assert [t.state[0] for t in one.violations[0].trace] == [0, 3, 4, 3] and one.violations[0].loop == 2
    cut = explore(m, ExploreOptions(strategy="dfs", temporal=("X",), max_depth=2, check_deadlock=True))
    assert cut.limit_hit == "depth" and cut.verdict == "incomplete" and not cut.violations


def test_dfs_symmetry_one_pass_equals_two():
    for goal in (lambda s: s[0] + s[1] >= 1, lambda s: s[0] + s[1] == 3):
        prop = eventually("P", "", goal)
        for sym in (True, False):
            opts = ExploreOptions(temporal=("P",), symmetry=sym, strategy="dfs")
            one, two = both(SymmetricGrid(prop), opts)
            assert outcome(one)[:-2] == outcome(two)[:-2]  # (with symmetry a tie may break otherwise)
            assert [(v.property, len(v.trace), v.loop) for v in one.violations] == \
                [(v.property, len(v.trace), v.loop) for v in two.violations]


def test_dfs_refusal_keeps_the_two_pass_order():
    grid = SymmetricGrid(eventually("P", "x reaches 2", lambda s: s[0] == 2))
    with pytest.raises(LivenessError, match="symmetry orbit"):
        explore(grid, ExploreOptions(temporal=("P",), properties=(), check_deadlock=True, strategy="dfs"))
    options = ExploreOptions(temporal=("P",), check_deadlock=False, strategy="dfs")
    one, two = both(grid, options)
    assert outcome(one) == outcome(two) and one.violations[0].property == "NotCorner"


def test_dfs_one_pass_counts_steps_leaving_the_constraint_as_enabled():
    # 0's only step leads outside the constraint: WF(a) forbids stuttering at 0, so the behaviour is
    # cut there, never blamed; without WF(a), stuttering at 0 forever violates <>X
    edges = {0: [("a", 1)], 1: [("a", 2)]}
    for fair, verdict in (([WF("a")], "holds"), ([], "violated")):
        m = SafetyGraph(edges, [0], set(), set(), set(), {1}, set(), fair, [eventually("X", "", lambda s: s[0] == 2)])
        one = assert_dfs_same(m, ExploreOptions(temporal=("X",), check_deadlock=False, properties=("Inv1",)))
        assert one.verdict == verdict and "in the safety DFS (one pass)" in one.notes[-1]
