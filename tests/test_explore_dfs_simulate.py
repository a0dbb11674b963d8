"""DFS with a depth bound and seeded random simulation."""

from __future__ import annotations

from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.trace import trace_is_valid
from eoscheck.examples.toys import Counter, Grid
from eoscheck.examples.twophase import TwoPhase

NONE = ()


def test_dfs_explores_the_whole_space_like_bfs():
    dfs = explore(TwoPhase(4), ExploreOptions(strategy="dfs"))
    bfs = explore(TwoPhase(4), ExploreOptions())
    assert dfs.verdict == "holds"
    assert (dfs.stats.distinct, dfs.stats.generated) == (bfs.stats.distinct, bfs.stats.generated)


def test_dfs_depth_bound_gives_incomplete_when_it_cuts():
    cut = explore(Counter(limit=10, terminal=True), ExploreOptions(strategy="dfs", properties=NONE, max_depth=5))
    assert (cut.verdict, cut.limit_hit, cut.stats.distinct, cut.stats.depth) == ("incomplete", "depth", 5, 5)
    full = explore(Counter(limit=4, terminal=True), ExploreOptions(strategy="dfs", properties=NONE, max_depth=5))
    assert (full.verdict, full.limit_hit) == ("holds", None)


def test_dfs_with_a_bound_reexpands_states_found_again_by_shorter_paths():
    # Every state of the 5x5 grid is within 9 states of (0,0); a DFS that kept the first (deep)
    # visit of a state would miss some under a tight bound. With the bound at the diameter, all 25.
    result = explore(Grid(5), ExploreOptions(strategy="dfs", properties=NONE, max_depth=9))
    assert result.stats.distinct == 25
    # paths longer than the bound exist (through resets) but lead only to states reached anyway
    assert result.verdict == "holds"
    tight = explore(Grid(5), ExploreOptions(strategy="dfs", properties=NONE, max_depth=8))
    assert (tight.stats.distinct, tight.verdict, tight.limit_hit) == (24, "incomplete", "depth")


def test_dfs_deadlock_and_transition_traces_are_valid_and_shortest_after_shortening():
    machine = Counter(limit=5)
    (dead,) = explore(machine, ExploreOptions(strategy="dfs", properties=NONE)).violations
    assert dead.kind == "deadlock" and dead.length == 6 and trace_is_valid(machine, dead.trace)
    wrap = Counter(limit=5, wrap=True)
    (trans,) = explore(wrap, ExploreOptions(strategy="dfs", properties=("NeverDecreases",))).violations
    assert trans.kind == "transition" and trans.length == 7 and trace_is_valid(wrap, trans.trace)


def test_dfs_continue_reports_each_property():
    result = explore(Counter(limit=8, wrap=True), ExploreOptions(strategy="dfs", stop_at_first=False))
    assert sorted(v.property for v in result.violations) == ["Below3", "Below5", "NeverDecreases"]


def test_simulation_never_says_holds():
    result = explore(Counter(limit=3, terminal=True), ExploreOptions(strategy="simulate", properties=NONE, walks=10))
    assert result.verdict == "incomplete"
    assert any("never proves" in n for n in result.notes)
    assert result.stats.distinct == 4


def test_simulation_is_reproducible_with_a_seed_and_varies_without():
    def run(seed):
        r = explore(Grid(5), ExploreOptions(strategy="simulate", seed=seed, walks=30, walk_depth=40))
        return (r.stats.generated, r.stats.distinct,
                [(v.found_length, [t.state for t in v.trace]) for v in r.violations])

    first = run(5)
    assert first[2], "this seed finds the corner"
    assert run(5) == first
    assert len({run(seed)[:2] for seed in range(6)}) > 1


def test_simulation_finds_deadlock_and_respects_walk_depth():
    (dead,) = explore(Counter(limit=5), ExploreOptions(strategy="simulate", properties=NONE, walks=1)).violations
    assert dead.kind == "deadlock" and dead.length == 6
    short = explore(Counter(limit=50, terminal=True), ExploreOptions(strategy="simulate", properties=NONE,
                                                                   walks=2, walk_depth=10))
    assert short.stats.depth == 10 and short.verdict == "incomplete"


def test_simulation_state_limit():
    result = explore(TwoPhase(5), ExploreOptions(strategy="simulate", max_states=50))
    assert result.limit_hit == "states" and result.verdict == "incomplete"


def test_dfs_and_simulation_time_limits():
    for strategy in ("dfs", "simulate"):
        result = explore(TwoPhase(7), ExploreOptions(strategy=strategy, max_seconds=0.0, walks=10**6))
        assert result.verdict == "incomplete" and result.limit_hit == "time", strategy
        assert result.notes
