"""A transition property judged per actor (``transition(each=True)``): the conjunction over the actors
of its one read part, each actor's conjunct memoised on (step, its value before, after). A rule outcome
that writes an actor whole from a memo key that holds it whole fixes both values, so
``_Plan.check_index`` decides that conjunct once per outcome and leaves the property out of the
outcome's check set where it holds; where it fails, the property stays in the set and the step fails
per successor. Findings and counts are those of the same property written as one ``all(...)`` over
the actors and asked on every step."""

from __future__ import annotations

from typing import Any

import pytest
from eoscheck.checker.compose import Actors, Composed, ComposeError, Part, rule, transition
from eoscheck.checker.explore import ExploreOptions, explore


def _tens(n: int) -> int:
    return n // 10


class Counters(Composed):
    """Counters that go up by 4 and halve from 20 (both reading their slot whole) or drop to 0
    (reading only ``done``): a counter's tens may fall on a Halve (decided per outcome) or a Drop
    (checked per successor)."""

    counter = Actors(count="counters", init=0, interned=False)
    done = Part(init=0, interned=False)

    def __init__(self, counters: int = 2, top: int = 24, halve: bool = True, drops: int = 2) -> None:
        self.top, self.halve, self.drops = top, halve, drops
        super().__init__({"counters": counters})

    @rule("Add", params={"c": "counter"}, reads=("counter[c]",), writes=("counter[c]",))
    def add(self, c: int, counter: int) -> dict[str, Any] | None:
        return {"counter": counter + 4} if counter + 4 <= self.top else None

    @rule("Halve", params={"c": "counter"}, reads=("counter[c]",), writes=("counter[c]",))
    def halve_it(self, c: int, counter: int) -> dict[str, Any] | None:
        return {"counter": counter // 2} if self.halve and counter >= 20 else None

    @rule("Drop", params={"c": "counter"}, reads=("done",), writes=("counter[c]", "done"))
    def drop(self, c: int, done: int) -> dict[str, Any] | None:
        return {"counter": 0, "done": done + 1} if done < self.drops else None

    @transition("TensGrow", reads=("counter",), each=True)
    def tens_grow(self, step: tuple, before: Any, after: Any) -> bool:
        """a counter's tens never fall"""
        return _tens(after.counter) >= _tens(before.counter)

    @transition("DoneGrows", reads=("done",), stuttering=True)
    def done_grows(self, step: tuple, before: Any, after: Any) -> bool:
        """done never falls"""
        return after.done >= before.done


class CountersAskedAlways(Counters):
    @transition("TensGrow", reads=("counter",))
    def tens_grow(self, step: tuple, before: Any, after: Any) -> bool:
        """a counter's tens never fall"""
        return all(_tens(b) >= _tens(a) for a, b in zip(before.counter, after.counter))


def _check_sets(m: Composed, action: str) -> list[tuple[Any, tuple, tuple[str, ...]]]:
    """(memo key, step, the properties its outcome's check set names) of every memoised outcome of ``action``."""
    plan = m._plan
    return [(key, step, plan.check_sets[ci]) for r in plan.rules if getattr(r, "action", None) == action
            for b in r.bindings for key, outs in b.memo.items() for step, _, _, ci in outs]


def _summary(result: Any) -> tuple:
    coverage = {a: (c.generated, c.distinct, c.outside) for a, c in result.stats.coverage.items()}
    return (result.verdict, result.stats.distinct, result.stats.generated, result.stats.depth, coverage,
            [(v.property, v.kind, [t.step for t in v.trace]) for v in result.violations])


def test_an_outcome_that_fixes_the_actor_is_decided_once_and_checked_only_where_it_fails():
    m = Counters()
    result = explore(m, ExploreOptions(stop_at_first=False, check_deadlock=False))
    assert {v.property for v in result.violations} == {"TensGrow"}
    adds = _check_sets(m, "Add")
    assert adds and {names for _, _, names in adds} == {()}  # tens never fall on an Add: decided, unchecked
    halves = _check_sets(m, "Halve")
    assert halves and all(names == ("TensGrow",) for _, _, names in halves)  # 20 -> 10, 24 -> 12: they fall
    # Drop's key does not hold the counter: asked per successor (with DoneGrows, which it moves)
    assert {names for _, _, names in _check_sets(m, "Drop")} == {("TensGrow", "DoneGrows")}


def test_the_findings_and_counts_are_the_conjunctions_asked_on_every_step():
    # (halve, drops): Drops and Halves, Drops alone, Halves alone (only an outcome decided to fail)
    for halve, drops in ((True, 2), (False, 2), (True, 0)):
        for stop_at_first in (True, False):
            opts = ExploreOptions(stop_at_first=stop_at_first, check_deadlock=False)
            each = explore(Counters(halve=halve, drops=drops), opts)
            assert [v.property for v in each.violations] == ["TensGrow"]  # a Drop from 12 or more, or a Halve
            assert each.violations[0].trace[-1].step[0] == ("Halve" if not drops else "Drop")
            assert _summary(each) == _summary(explore(CountersAskedAlways(halve=halve, drops=drops), opts))
    # no counter reaches 10 and none is halved: nothing to find
    low = Counters(top=8)
    assert explore(low, ExploreOptions(stop_at_first=False, check_deadlock=False)).verdict == "holds"


def test_the_compiled_check_judges_every_actor_that_moves():
    m = Counters(counters=3)
    check = m._plan.properties["TensGrow"].check
    s = next(iter(m.init_states()))
    base = list(s)
    pos = [m._plan.pos[m._plan.slots["counter"][0] + i] for i in range(3)]
    before, after = list(base), list(base)
    before[pos[0]], before[pos[2]] = 12, 25
    after[pos[0]], after[pos[2]] = 14, 19  # the first rises, the third's tens fall
    assert not check(tuple(before), ("Drop", 2), tuple(after))
    after[pos[2]] = 31
    assert check(tuple(before), ("Drop", 2), tuple(after))
    after[pos[0]] = 9  # now the first's fall
    assert not check(tuple(before), ("Drop", 0), tuple(after))


class TwoReads(Composed):
    counter = Actors(count="counters", init=0, interned=False)
    done = Part(init=0, interned=False)

    def __init__(self) -> None:
        super().__init__({"counters": 2})

    @rule("Add", params={"c": "counter"}, reads=("counter[c]",), writes=("counter[c]",))
    def add(self, c: int, counter: int) -> dict[str, Any] | None:
        return {"counter": counter + 1} if counter < 3 else None


def test_each_reads_one_whole_actors_part():
    with pytest.raises(ComposeError, match="each=True"):
        transition("Bad", reads=("counter", "done"), each=True)(lambda self, step, before, after: True)

    class OnScalar(TwoReads):
        @transition("Bad", reads=("done",), each=True)
        def bad(self, step: tuple, before: Any, after: Any) -> bool:
            return True

    with pytest.raises(ComposeError, match="each=True reads one whole Actors part"):
        OnScalar()
