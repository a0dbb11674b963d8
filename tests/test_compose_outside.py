"""Outcomes an effect marks ``OUTSIDE`` the state constraint (``rule``'s ``outside=True``): the BFS's
fused duplicate test counts and cuts their successors without building them, and a run reports
exactly what it reports without the marks (verdict, counts, per-action coverage with the cut
successors, transition findings, traces). A mark the state of
its memo miss contradicts, or a mark from a rule that does not declare it, is a ``ComposeError``."""

from __future__ import annotations

from typing import Any

import pytest
from eoscheck.checker.compose import (
    OUTSIDE,
    Actors,
    Composed,
    ComposeError,
    constraint,
    rule,
    transition,
)
from eoscheck.checker.compose.rules import _NO_MSG, OUTSIDE_BUILT
from eoscheck.checker.explore import ExploreOptions, explore


class Counters(Composed):
    """Counters that go up by one or two (a choice) and reset, bounded by a declared constraint:
    Inc marks a successor past the bound ``OUTSIDE`` when ``mark`` (``lie``: every successor)."""

    counter = Actors(count="counters", init=0, interned=False)

    def __init__(self, counters: int = 2, bound: int = 3, mark: bool = True, lie: bool = False) -> None:
        self.bound, self.mark, self.lie = bound, mark, lie
        super().__init__({"counters": counters})

    @rule("Inc", params={"c": "counter"}, reads=("counter[c]",), writes=("counter[c]",), results=("by",),
          outside=True)
    def inc(self, c: int, counter: int) -> list[dict[str, Any]]:
        moves: list[dict[str, Any]] = []
        for by in (1, 2):
            move: dict[str, Any] = {"counter": counter + by, "by": by}
            if self.mark and (counter + by > self.bound or self.lie):
                move[OUTSIDE] = True
            moves.append(move)
        return moves

    @rule("Reset", params={"c": "counter"}, reads=("counter[c]",), writes=("counter[c]",))
    def reset(self, c: int, counter: int) -> dict[str, Any] | None:
        return {"counter": 0} if counter else None

    @constraint("Bounded", params={"c": "counter"}, reads=("counter[c]",))
    def bounded(self, counter: int) -> bool:
        """every counter within the bound"""
        return counter <= self.bound



class CheckedCounters(Counters):
    """Counters with a transition property only a step that leaves the constraint can fail."""

    @transition("NoJumpToFive", reads=("counter",), actions=("Inc",))
    def no_jump_to_five(self, step: tuple, before: Any, after: Any) -> bool:
        """no counter jumps by two to 5 (past the default bound: a step out of the constraint)"""
        return all(b != 5 or b - a != 2 for a, b in zip(before.counter, after.counter))


def _summary(result: Any) -> tuple:
    coverage = {a: (c.generated, c.distinct, c.outside) for a, c in result.stats.coverage.items()}
    return (result.verdict, result.stats.distinct, result.stats.generated, result.stats.depth, coverage,
            [(v.property, v.kind, [(t.step, t.state) for t in v.trace]) for v in result.violations])


def _counting_within(machine: Composed) -> list[tuple]:
    """The states the engines ask ``within_bounds`` of (the instance's, wrapped)."""
    asked: list[tuple] = []
    within = machine.within_bounds

    def counted(s: tuple) -> bool:
        asked.append(s)
        return within(s)
    machine.within_bounds = counted  # type: ignore[method-assign]
    return asked


@pytest.mark.parametrize("stop_at_first", [True, False])
@pytest.mark.parametrize("counters", [1, 2, 3])
@pytest.mark.parametrize("cls", [Counters, CheckedCounters])
def test_marked_outcomes_report_what_unmarked_ones_report(cls, counters, stop_at_first):
    opts = ExploreOptions(stop_at_first=stop_at_first)
    marked_machine = cls(counters)
    asked = _counting_within(marked_machine)
    marked = explore(marked_machine, opts)
    plain_machine = cls(counters, mark=False)
    plain_asked = _counting_within(plain_machine)
    plain = explore(plain_machine, opts)
    assert any(v is not None for v in marked_machine._plan._dedup.values())  # the fused path ran
    assert _summary(marked) == _summary(plain)
    assert marked.stats.coverage["Inc"].outside > 0
    if cls is Counters and counters > 1:  # one counter: each marked outcome is made (and checked) once
        # the marked successors were not asked: only the misses' checks of the marks and the new
        # states inside the constraint were (the unmarked run asks every new fingerprint, a cut one
        # again from every parent)
        assert sum(max(s) > 3 for s in asked) < sum(max(s) > 3 for s in plain_asked)


def test_a_step_leaving_the_constraint_is_not_checked_either_way():
    """The transition property fails only on steps into states the constraint cuts, which no
    engine checks: both runs hold, and a property failing on a step inside the constraint is
    reported alike."""
    for stop_at_first in (True, False):
        opts = ExploreOptions(stop_at_first=stop_at_first)
        marked = explore(CheckedCounters(2), opts)
        assert marked.verdict == "holds"
        assert _summary(marked) == _summary(explore(CheckedCounters(2, mark=False), opts))
        inside = explore(CheckedCounters(2, bound=5), opts)  # a jump by two to 5 is inside
        assert [v.property for v in inside.violations] == ["NoJumpToFive"]
        assert _summary(inside) == _summary(explore(CheckedCounters(2, bound=5, mark=False), opts))


def test_marked_outcomes_have_builders_of_their_own_that_build_the_same_successor():
    m = Counters(2)
    (inc,) = [r for r in m._plan.rules if r.action == "Inc"]
    s = next(iter(m.init_states()))
    for x in range(6):
        s = tuple(x if i == 0 else v for i, v in enumerate(s))
        outs = inc.compute(inc.bindings[0], s, _NO_MSG, 0)
        for step, build, a, _ in outs:
            t = build(s, a)
            assert (build in OUTSIDE_BUILT) == (t[0] > 3)
            assert dict(m.successors(s))[step] == t


def test_a_mark_the_miss_state_contradicts_is_an_error():
    with pytest.raises(ComposeError, match="marked OUTSIDE, but its successor is within"):
        explore(Counters(2, lie=True), ExploreOptions(stop_at_first=False))


def test_a_mark_needs_the_rules_declaration():
    class Undeclared(Counters):
        @rule("Inc", params={"c": "counter"}, reads=("counter[c]",), writes=("counter[c]",), results=("by",))
        def inc(self, c: int, counter: int) -> list[dict[str, Any]]:
            return [{"counter": counter + 1, "by": 1, OUTSIDE: counter >= self.bound}]

    with pytest.raises(ComposeError, match="outside=True"):
        explore(Undeclared(1), ExploreOptions(stop_at_first=False))
