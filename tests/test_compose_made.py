"""What a rule's memo miss makes of its effect's result (``_Rule._made``), kept per binding on the
result's items (``_Binding.made``) and used again by later misses that return an equal result:

- an equal result of another type (``1`` and ``True``) is not taken for the first one where the
  type shows: in the step's results and in a part that holds the value itself (``_Rule.typed``);
- an outcome whose key fixes a watched place's content before the step gets the check set of that
  content (``_Plan.check_index``'s ``fixed``), not the one of the first state the result was made on.

Checked on toy machines against the same machine without memos."""

from __future__ import annotations

from collections import deque
from typing import Any

from eoscheck.checker.compose import Actors, Composed, Scalar, rule, transition
from eoscheck.checker.explore import ExploreOptions, explore


class Marks(Composed):
    """A counter from 0 to ``top`` and a mark (held in the state as it is, not interned). Note writes
    the same mark and result at every count, a bool at even counts and an int at odd ones: equal
    results (``True == 1``) of different types, one binding, one miss per count."""

    counter = Scalar(init=0)
    mark = Scalar(init=0)

    def __init__(self, top: int = 5, memoize: bool = True) -> None:
        self.top = top
        super().__init__({}, memoize=memoize)

    @rule("Count", reads=("counter",), writes=("counter",))
    def count(self, counter: int) -> dict[str, Any] | None:
        return {"counter": counter + 1} if counter < self.top else None

    @rule("Note", reads=("counter",), writes=("mark",), results=("flag",))
    def note(self, counter: int) -> dict[str, Any]:
        flag = True if counter % 2 == 0 else 1
        return {"mark": flag, "flag": flag}


def _walk(m: Composed) -> list[tuple[int, tuple, Any]]:
    """(counter, Note's step, the mark after it) of every reachable state, breadth first."""
    out: list[tuple[int, tuple, Any]] = []
    todo = deque(m.init_states())
    seen = set(todo)
    while todo:
        s = todo.popleft()
        for step, t in m.successors(s):
            if step[0] == "Note":
                out.append((m.view(s).counter, step, m.view(t).mark))
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return out


def test_an_equal_result_of_another_type_keeps_its_type_in_the_step_and_the_state():
    notes = _walk(Marks())
    assert sorted({c for c, _, _ in notes}) == [0, 1, 2, 3, 4, 5]
    for counter, step, mark in notes:
        kind = bool if counter % 2 == 0 else int
        assert type(step[-1]) is kind and type(mark) is kind, (counter, step, mark)
    # the same steps and successors (with their types) as the machine that keeps nothing
    typed = [(c, tuple(map(type, step)), type(mark)) for c, step, mark in notes]
    plain = [(c, tuple(map(type, step)), type(mark)) for c, step, mark in _walk(Marks(memoize=False))]
    assert typed == plain


def test_an_equal_result_of_the_same_type_is_made_once_per_binding():
    m = Marks(top=7)
    explore(m, ExploreOptions(stop_at_first=False, check_deadlock=False))
    note = next(r for r in m._plan.rules if getattr(r, "action", None) == "Note")
    (b,) = note.bindings
    assert len(b.memo) == 8  # one miss per count
    assert len(b.made) == 1  # kept under the first result's items (a bool); the ints are made afresh
    (made,) = b.made.values()
    assert made[0] == ("Note", True) and type(made[0][-1]) is bool


def _tens(n: int) -> int:
    return n // 10


class Dial(Composed):
    """Counters that go up by 4 and are set to 12 (both reading their slot whole): Set returns the
    same result wherever it fires, so its outcomes share one made result while their check sets
    differ with the content before the step: TensGrow may fail only where the tens move."""

    counter = Actors(count="counters", init=0, interned=False, projections={"tens": _tens})

    def __init__(self, counters: int = 2, top: int = 24, memoize: bool = True) -> None:
        self.top = top
        super().__init__({"counters": counters}, memoize=memoize)

    @rule("Add", params={"c": "counter"}, reads=("counter[c]",), writes=("counter[c]",))
    def add(self, c: int, counter: int) -> dict[str, Any] | None:
        return {"counter": counter + 4} if counter + 4 <= self.top else None

    @rule("Set", params={"c": "counter"}, reads=("counter[c]",), writes=("counter[c]",))
    def set_twelve(self, c: int, counter: int) -> dict[str, Any] | None:
        return {"counter": 12} if counter != 12 else None

    @transition("TensGrow", reads=("counter",), stuttering=("counter:tens",))
    def tens_grow(self, step: tuple, before: Any, after: Any) -> bool:
        """a counter's tens never fall"""
        return all(_tens(b) >= _tens(a) for a, b in zip(before.counter, after.counter))


class DialAskedAlways(Dial):
    @transition("TensGrow", reads=("counter",))
    def tens_grow(self, step: tuple, before: Any, after: Any) -> bool:
        """a counter's tens never fall"""
        return all(_tens(b) >= _tens(a) for a, b in zip(before.counter, after.counter))


def _summary(result: Any) -> tuple:
    coverage = {a: (c.generated, c.distinct) for a, c in result.stats.coverage.items()}
    return (result.verdict, result.stats.distinct, result.stats.generated, result.stats.depth, coverage,
            sorted((v.property, tuple(t.step for t in v.trace)) for v in result.violations))


def test_one_made_result_gets_the_check_set_of_each_content_before_the_step():
    m = Dial()
    explore(m, ExploreOptions(stop_at_first=False, check_deadlock=False))
    plan = m._plan
    sets = set()
    for r in plan.rules:
        if getattr(r, "action", None) == "Set":
            for b in r.bindings:
                assert len(b.made) == 1  # one result: {"counter": 12}
                for key, outs in b.memo.items():
                    before = key if type(key) is int else key[0]  # the key: the counter's content
                    for _, _, _, ci in outs:
                        sets.add((before, plan.check_sets[ci]))
    assert {before for before, _ in sets} == {0, 4, 8, 16, 20, 24}
    for before, names in sets:
        assert names == (() if _tens(before) == _tens(12) else ("TensGrow",)), (before, names)


def test_the_findings_are_those_of_the_property_asked_on_every_step():
    opts = ExploreOptions(stop_at_first=False, check_deadlock=False)
    found = explore(Dial(), opts)
    assert [v.property for v in found.violations] == ["TensGrow"]  # a Set from 20 or 24
    assert _summary(found) == _summary(explore(DialAskedAlways(), opts))
    assert _summary(found) == _summary(explore(Dial(memoize=False), opts))
