"""A stuttering transition property dropped from an outcome's check set where the outcome leaves its
terms equal (``_Plan.check_index``'s ``fixed``): only where the outcome writes the term's slot whole
and its rule's memo key holds that slot whole, so that every state the outcome serves has the same
content there before the step. Elsewhere (a rule that does not read the slot, or reads it through a
projection) the property stays in the set and its own test decides per step. Findings and counts
are those of the property asked on every step."""

from __future__ import annotations

from typing import Any

from eoscheck.checker.compose import Actors, Composed, Part, rule, transition
from eoscheck.checker.explore import ExploreOptions, explore

from tests.test_compose_machine import StoreCountingDuplicates, StoreWithoutStuttering


def _tens(n: int) -> int:
    return n // 10


class Tens(Composed):
    """Counters that go up by 4 (reading their slot whole) and drop to 0 (reading nothing): the
    property may fail only where a counter's tens move."""

    counter = Actors(count="counters", init=0, interned=False, projections={"tens": _tens})
    done = Part(init=0, interned=False)

    def __init__(self, counters: int = 2, top: int = 24) -> None:
        self.top = top
        super().__init__({"counters": counters})

    @rule("Add", params={"c": "counter"}, reads=("counter[c]",), writes=("counter[c]",))
    def add(self, c: int, counter: int) -> dict[str, Any] | None:
        return {"counter": counter + 4} if counter + 4 <= self.top else None

    @rule("Drop", params={"c": "counter"}, reads=("done",), writes=("counter[c]", "done"))
    def drop(self, c: int, done: int) -> dict[str, Any] | None:
        return {"counter": 0, "done": 1} if not done else None

    @transition("TensGrow", reads=("counter",), stuttering=("counter:tens",))
    def tens_grow(self, step: tuple, before: Any, after: Any) -> bool:
        """a counter's tens never fall"""
        return all(_tens(b) >= _tens(a) for a, b in zip(before.counter, after.counter))


class TensAskedAlways(Tens):
    @transition("TensGrow", reads=("counter",))
    def tens_grow(self, step: tuple, before: Any, after: Any) -> bool:
        """a counter's tens never fall"""
        return all(_tens(b) >= _tens(a) for a, b in zip(before.counter, after.counter))


def _check_sets(m: Composed, action: str) -> list[tuple[tuple, tuple[str, ...]]]:
    """(step, the properties its outcome's check set names) of every memoised outcome of ``action``."""
    plan = m._plan
    return [(step, plan.check_sets[ci]) for r in plan.rules if getattr(r, "action", None) == action
            for b in [*r.bindings, *(b for bs in r.by_msg.values() for b in bs)]  # a receive rule's: by message
            for outs in b.memo.values() for step, _, _, ci in outs]


def _summary(result: Any) -> tuple:
    coverage = {a: (c.generated, c.distinct, c.outside) for a, c in result.stats.coverage.items()}
    return (result.verdict, result.stats.distinct, result.stats.generated, result.stats.depth, coverage,
            [(v.property, v.kind, [t.step for t in v.trace]) for v in result.violations])


def test_an_outcome_that_leaves_the_term_equal_is_not_checked_where_its_key_holds_the_slot():
    m = Tens()
    explore(m, ExploreOptions(stop_at_first=False, check_deadlock=False))
    plan = m._plan
    adds = []
    for r in plan.rules:
        if r.action == "Add":
            for b in r.bindings:
                for key, outs in b.memo.items():
                    before = key if type(key) is int else key[0]  # the key: the counter's content
                    for _, _, a, ci in outs:
                        adds.append((_tens(before) != _tens(a[0]), plan.check_sets[ci]))  # a[0]: written
    assert {moved for moved, _ in adds} == {True, False}
    assert all(names == (("TensGrow",) if moved else ()) for moved, names in adds)
    # Drop's key does not hold the counter (it reads ``done``): checked on every outcome, even where
    # the counter was 0 already
    assert {names for _, names in _check_sets(m, "Drop")} == {("TensGrow",)}


def test_the_findings_are_the_propertys_asked_on_every_step():
    for stop_at_first in (True, False):
        opts = ExploreOptions(stop_at_first=stop_at_first, check_deadlock=False)
        still = explore(Tens(), opts)
        assert [v.property for v in still.violations] == ["TensGrow"]  # a Drop from 12 or more
        assert _summary(still) == _summary(explore(TensAskedAlways(), opts))
    # no counter reaches 10: nothing to find, and no Add outcome is checked
    low = Tens(top=8)
    assert explore(low, ExploreOptions(stop_at_first=False, check_deadlock=False)).verdict == "holds"
    assert {names for _, names in _check_sets(low, "Add")} == {()}


def test_an_append_is_checked_only_where_it_adds_a_duplicate():
    """Store's Append reads and writes the log whole: an append that adds no duplicate leaves
    NoNewDuplicate's term (``log:dups``) equal and is not checked; a duplicate append is, and the
    results are the unshortcut property's."""
    m = StoreCountingDuplicates(max_copies=1)
    dup = explore(m, ExploreOptions(check_deadlock=False, stop_at_first=False))
    sets = _check_sets(m, "Append")
    # (Store's LogGrows, asked on every step, stays in every set)
    assert {names for step, names in sets if step[-1] is False} == {("LogGrows",)}
    assert {names for step, names in sets if step[-1] is True} == {("LogGrows", "NoNewDuplicate")}
    plain = explore(StoreWithoutStuttering(max_copies=1), ExploreOptions(check_deadlock=False, stop_at_first=False))
    assert _summary(dup) == _summary(plain)
