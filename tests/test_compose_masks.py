"""Write masks (``Machine.masked_successors``) and what the engines skip with them: the state
constraint on a step that wrote none of the slots it reads (``Machine.within_reads``), and the
invariants' memos whose slots a step did not write (``Machine.fused_invariants_masked``). Counts,
coverage, verdicts and traces must be those of the plain path."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from eoscheck.checker.compose import constraint
from eoscheck.checker.compose.rules import write_mask
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.intern import Interner
from eoscheck.model.machines.eos import machine as eos_machine

from tests.test_compose_fused import Bounded, CheckedStore

#: a kafka.eos configuration with a group (its constraint reads the txn, group and member slots and
#: cuts Rejoin/Rebalance steps) and one with idempotent producers (it also reads the allocator)
PIPELINE = ("kafka-3.0-3.5", {"producers": 2, "members": 2, "input_records": 1, "partitions": 1,
                              "transactions": 1, "rebalances": 1, "rejoins": 1, "max_epoch": 3})
IDEMPOTENT = ("kafka-4.0", {"producers": 1, "idempotent_producers": 1, "idempotent_records": 1,
                            "new_producer_ids": 0, "max_epoch": 2})


class HashStore(CheckedStore):
    """CheckedStore on the engines' fast path (``hash`` fingerprints), where masks are used."""

    fingerprint_kind = "hash"


class BoundedStore(HashStore):
    """HashStore with a declared constraint that Send steps leave (and other steps do not touch)."""

    @constraint("FewSends", reads=("client",))
    def few_sends(self, client: tuple) -> bool:
        """at most three sends in all"""
        return sum(client) <= 3


def _eos(config: tuple[str, dict[str, int]]) -> Any:
    variant, bounds = config
    return eos_machine(variant, **bounds)


def _walk(m: Any, limit: int) -> Iterator[tuple[Any, list[tuple[Any, Any, int]]]]:
    """Breadth-first over the states inside the constraint: (state, its masked successors)."""
    masked = m.masked_successors()
    assert masked is not None
    frontier = [s for s in m.init_states() if m.within_bounds(s)]
    seen = set(frontier)
    done = 0
    while frontier and done < limit:
        nxt_frontier = []
        for s in frontier:
            steps = masked(s)
            yield s, steps
            done += 1
            for _, t, _ in steps:
                if t not in seen and m.within_bounds(t):
                    seen.add(t)
                    nxt_frontier.append(t)
        frontier = nxt_frontier


def _unmasked(m: Any) -> Any:
    m.masked_successors = lambda: None  # the engines' plain path
    return m


def _summary(result: Any) -> tuple:
    cov = {a: (c.generated, c.distinct) for a, c in result.stats.coverage.items()}
    return (result.verdict, result.stats.distinct, result.stats.generated, result.stats.depth, cov,
            [(v.property, [(t.step, t.state) for t in v.trace]) for v in result.violations])


MACHINES = [lambda: CheckedStore(max_copies=1, max_ticks=1), lambda: Bounded(rms=3), lambda: BoundedStore(records=3),
            lambda: _eos(PIPELINE), lambda: _eos(IDEMPOTENT)]


@pytest.mark.parametrize("make", MACHINES)
def test_masked_successors_are_the_successors_with_every_slot_they_change(make):
    m = make()
    changed = 0
    for s, steps in _walk(m, 3000):
        assert [(step, t) for step, t, _ in steps] == list(m.successors(s))
        for _, t, mask in steps:
            diff = write_mask(k for k in range(len(s)) if s[k] != t[k])
            assert diff & ~mask == 0, "a slot changed that the mask does not name"
            changed += bool(diff)
    assert changed


@pytest.mark.parametrize("make", [lambda: Bounded(rms=3), lambda: BoundedStore(records=3), lambda: _eos(PIPELINE),
                                  lambda: _eos(IDEMPOTENT)])
def test_the_declared_constraint_reads_decide_it(make):
    """A state that agrees with a successor on the declared reads and with its (inside) parent
    elsewhere is inside the constraint exactly when the successor is."""
    m = make()
    reads = m.within_reads()
    assert reads
    outside = 0
    for s, steps in _walk(m, 3000):
        for _, t, _ in steps:
            hybrid = tuple(t[k] if k in reads else s[k] for k in range(len(s)))
            assert m.within_bounds(hybrid) == m.within_bounds(t)
            outside += not m.within_bounds(t)
    assert outside, "the walk should leave the constraint somewhere"


def test_a_replaced_constraint_declares_no_reads():
    class Replaced(Bounded):
        def within_bounds(self, state: tuple) -> bool:
            return True

    assert Bounded(rms=3).within_reads() == frozenset(range(*_slots(Bounded(rms=3), "rm_state")))
    assert Replaced(rms=3).within_reads() is None
    assert CheckedStore().within_reads() is None  # no constraint


def _slots(m: Any, part: str) -> tuple[int, int]:
    base, count = m._plan.slots[part]
    return base, base + count


def _counting(m: Any) -> list[int]:
    """Count ``m``'s constraint tests (the wrapper keeps the declared reads)."""
    calls = [0]
    within = m.within_bounds

    def counted(s: tuple) -> bool:
        calls[0] += 1
        return within(s)
    counted.reads = within.reads  # type: ignore[attr-defined]
    m.within_bounds = counted
    return calls


@pytest.mark.parametrize("strategy", ["bfs", "parallel"])
@pytest.mark.parametrize("make", [lambda: BoundedStore(records=3, max_copies=1), lambda: _eos(PIPELINE),
                                  lambda: _eos(IDEMPOTENT)])
def test_steps_outside_the_constraint_count_as_on_the_plain_path(make, strategy):
    opts = ExploreOptions(stop_at_first=False, strategy=strategy, workers=2)
    masked_machine, plain_machine = make(), _unmasked(make())
    masked_calls, plain_calls = _counting(masked_machine), _counting(plain_machine)
    masked = explore(masked_machine, opts)
    plain = explore(plain_machine, opts)
    assert _summary(masked) == _summary(plain)
    # the run left the constraint, and the test was skipped on some steps
    assert masked.stats.generated > sum(c.distinct for c in masked.stats.coverage.values())
    if strategy == "bfs":
        assert 0 < masked_calls[0] < plain_calls[0]


@pytest.mark.parametrize("stop_at_first", [True, False])
@pytest.mark.parametrize("trial", [4, 8192])
def test_masked_invariants_report_what_the_full_checks_report(monkeypatch, stop_at_first, trial):
    from eoscheck.checker.compose import properties
    monkeypatch.setattr(properties, "FUSED_TRIAL", trial)
    monkeypatch.setattr(properties, "FUSED_MAX_MISS_TENTHS", -1)  # after the trial: the plain conjunction
    opts = ExploreOptions(check_deadlock=False, stop_at_first=stop_at_first)
    kwargs = {"records": 2, "max_copies": 1, "max_lost": 1}
    m = HashStore(**kwargs)
    used = []
    offered = m.fused_invariants_masked
    m.fused_invariants_masked = lambda names: used.append(names) or offered(names)  # type: ignore[method-assign]
    masked = explore(m, opts)
    plain = explore(_unmasked(HashStore(**kwargs)), opts)
    assert masked.verdict == "violated" and used
    assert _summary(masked) == _summary(plain)


def test_a_masked_invariant_check_looks_up_only_what_the_step_wrote(monkeypatch):
    from eoscheck.checker.compose import properties
    monkeypatch.setattr(properties, "FUSED_TRIAL", 1)
    monkeypatch.setattr(properties, "FUSED_MAX_MISS_TENTHS", -1)
    m = CheckedStore(max_copies=1)
    names = [n for n, p in m.properties().items() if p.kind == "invariant"]
    fused = m.fused_invariants(names)
    masked = m.fused_invariants_masked(names)
    assert fused is not None and masked is not None
    s = m.state()
    assert fused(s)  # the trial ends: the plain conjunction from now on
    checked = 0
    for parent, steps in _walk(m, 500):
        if not fused(parent):
            continue
        for _, t, mask in steps:
            assert masked(t, mask) == fused(t)
            checked += 1
    assert checked
    # a step that wrote nothing any invariant reads needs no lookup: an empty mask passes even a
    # state that breaks them (the caller vouches for the parent)
    bad = m.state(client=(3, 3))
    assert not fused(bad) and masked(bad, 0)


def test_an_id_is_one_int_object():
    table: Interner[tuple] = Interner("test")
    a = table.intern((1, ("x", 2)))
    b = table.intern((1, ("x", 2)))
    assert a == b and a is b
    assert table.intern((2,)) is not a
