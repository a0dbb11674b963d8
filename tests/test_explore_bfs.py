"""BFS bookkeeping on machines whose answers are known by hand (examples/toys.py)."""

from __future__ import annotations

import pytest
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.explore.common import UnknownPropertyError
from eoscheck.checker.trace import trace_is_valid
from eoscheck.examples.toys import Counter, Grid
from eoscheck.examples.twophase import TwoPhase

NONE = ()  # check no property: only deadlocks


def test_counter_counts_and_depth():
    result = explore(Counter(limit=6, terminal=True), ExploreOptions(properties=NONE))
    assert result.verdict == "holds"
    assert result.stats.distinct == 7
    assert result.stats.generated == 7  # initial state + 6 Inc steps
    assert result.stats.depth == 7


def test_deadlock_is_found_with_shortest_trace():
    machine = Counter(limit=4)
    result = explore(machine, ExploreOptions(properties=NONE))
    assert result.verdict == "violated"
    (violation,) = result.violations
    assert (violation.property, violation.kind) == ("deadlock", "deadlock")
    assert violation.length == 5
    assert violation.trace[-1].state == (4,)
    assert trace_is_valid(machine, violation.trace)


def test_deadlock_check_can_be_switched_off_and_terminal_states_are_exempt():
    assert explore(Counter(limit=4), ExploreOptions(properties=NONE, check_deadlock=False)).verdict == "holds"
    assert explore(Counter(limit=4, terminal=True), ExploreOptions(properties=NONE)).verdict == "holds"


def test_invariant_violation_stops_at_first_by_default():
    result = explore(Counter(limit=10, terminal=True), ExploreOptions())
    assert result.verdict == "violated"
    assert [v.property for v in result.violations] == ["Below3"]
    assert result.violations[0].length == 4
    assert result.stats.distinct < 11  # it stopped early


def test_continue_reports_every_violated_property_once_with_its_own_shortest_trace():
    machine = Counter(limit=8, wrap=True)
    result = explore(machine, ExploreOptions(stop_at_first=False))
    assert result.verdict == "violated"
    lengths = {v.property: v.length for v in result.violations}
    assert lengths == {"Below3": 4, "Below5": 6, "NeverDecreases": 10}
    kinds = {v.property: v.kind for v in result.violations}
    assert kinds["NeverDecreases"] == "transition"
    for v in result.violations:
        assert trace_is_valid(machine, v.trace)
        assert v.found_length == v.length
    assert result.stats.distinct == 9  # it kept going to the end


def test_transition_property_is_checked_before_dedup():
    # Wrap leads back to the (already visited) initial state: the check must see that step.
    machine = Counter(limit=3, wrap=True)
    result = explore(machine, ExploreOptions(properties=("NeverDecreases",)))
    assert result.verdict == "violated"
    (violation,) = result.violations
    assert violation.kind == "transition"
    assert violation.length == 5
    assert violation.trace[-1].step == ("Wrap",)
    assert violation.trace[-2].state == (3,) and violation.trace[-1].state == (0,)
    assert trace_is_valid(machine, violation.trace)


def test_no_deadlock_with_wrap_and_holds_without_the_bad_property():
    assert explore(Counter(limit=3, wrap=True), ExploreOptions(properties=NONE)).verdict == "holds"


@pytest.mark.parametrize("limit, expected", [
    (ExploreOptions(max_states=100), "states"),
    (ExploreOptions(max_depth=5), "depth"),
    (ExploreOptions(max_seconds=0.0), "time"),
])
def test_limits_give_incomplete_never_holds(limit, expected):
    result = explore(TwoPhase(5), limit)
    assert result.verdict == "incomplete"
    assert result.limit_hit == expected
    assert result.notes
    if expected == "states":
        assert result.stats.distinct == 100
    if expected == "depth":
        assert result.stats.depth == 5
        assert result.stats.distinct < 8_832


def test_limits_that_are_not_reached_still_say_holds():
    result = explore(TwoPhase(3), ExploreOptions(max_states=288, max_depth=11, max_seconds=600))
    assert (result.verdict, result.limit_hit, result.stats.distinct) == ("holds", None, 288)


def test_depth_limit_exactly_at_the_last_level_is_complete():
    # Counter(limit=4, terminal) has 5 levels; bounding at 5 cuts nothing off.
    result = explore(Counter(limit=4, terminal=True), ExploreOptions(properties=NONE, max_depth=5))
    assert result.verdict == "holds"
    cut = explore(Counter(limit=4, terminal=True), ExploreOptions(properties=NONE, max_depth=4))
    assert (cut.verdict, cut.limit_hit, cut.stats.distinct) == ("incomplete", "depth", 4)


def test_state_constraint_is_neither_counted_nor_expanded():
    result = explore(Counter(limit=10, bound=3), ExploreOptions(properties=("Below5",)))
    # x = 4 is outside: not a state, and x = 3 is not a deadlock (it has a successor, outside)
    assert result.verdict == "holds"
    assert result.stats.distinct == 4


def test_coverage_per_action_and_never_fired():
    machine = Counter(limit=5, wrap=True)
    result = explore(machine, ExploreOptions(properties=NONE))
    cov = result.stats.coverage
    assert list(cov) == ["Inc", "Wrap", "Never"]  # the machine's declared order
    assert (cov["Inc"].generated, cov["Inc"].distinct) == (5, 5)
    assert (cov["Wrap"].generated, cov["Wrap"].distinct) == (1, 0)
    assert result.stats.never_fired(list(machine.actions)) == ["Never"]


def test_symmetry_reduces_states_and_traces_stay_concrete():
    plain = explore(Grid(4), ExploreOptions(properties=NONE))
    sym = explore(Grid(4, symmetric=True), ExploreOptions(properties=NONE))
    assert (plain.stats.distinct, sym.stats.distinct) == (16, 10)
    machine = Grid(4, symmetric=True)
    result = explore(machine, ExploreOptions())
    (violation,) = result.violations
    assert violation.length == 7
    assert violation.trace[-1].state == (3, 3)
    assert trace_is_valid(machine, violation.trace)


def test_unknown_property_names_the_valid_ones():
    with pytest.raises(UnknownPropertyError, match="Below3"):
        explore(Counter(), ExploreOptions(properties=("Nope",)))


def test_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="bfs"):
        explore(Counter(), ExploreOptions(strategy="quantum"))


def test_violation_in_an_initial_state():
    class BadStart(Counter):
        def init_states(self):
            yield (7,)
            yield (0,)

    result = explore(BadStart(limit=10, terminal=True), ExploreOptions(properties=("Below5",)))
    (violation,) = result.violations
    assert violation.length == 1 and violation.trace[0].state == (7,)


def test_queue_is_reported_when_stopping_early():
    result = explore(TwoPhase(5), ExploreOptions(max_states=2_000))
    assert result.stats.queue > 0


def test_states_with_process_dependent_hashes_are_refused():
    from eoscheck.checker.fingerprint import UnstableStateError

    class Stringly(Counter):
        def successors(self, s):
            yield ("Inc",), (s[0] + 1, "oops")

    for strategy in ("bfs",):
        with pytest.raises(UnstableStateError, match="str"):
            explore(Stringly(), ExploreOptions(strategy=strategy, properties=NONE))

    class BadInit(Counter):
        def init_states(self):
            yield (0, None)

    for strategy in ("bfs", "dfs", "simulate"):
        with pytest.raises(UnstableStateError, match="NoneType"):
            explore(BadInit(), ExploreOptions(strategy=strategy, properties=NONE))
