"""Fused property checks (``Machine.fused_invariants`` / ``fused_transitions``) and declared state
constraints (``@constraint``): the engines' results must not depend on them."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from eoscheck.checker.compose import constraint, invariant, transition
from eoscheck.checker.explore import ExploreOptions, explore
from eoscheck.checker.machine import Machine
from eoscheck.examples.twophase_composed import ComposedTwoPhase

from tests.test_compose_machine import Store


class CheckedStore(Store):
    """Store with two more invariants (one over several parts) and a transition property that only
    one action can break, so that a fused check covers several memos and several actions."""

    @invariant("FewAppends", reads=("log", "client"))
    def few_appends(self, log: tuple, client: tuple) -> bool:
        """at most three appends, and never more than sends"""
        return len(log) <= 3 and len(log) <= sum(client)

    @invariant("ClientsBounded", params={"c": "client"}, reads=("client[c]",))
    def clients_bounded(self, client: int) -> bool:
        """no client sends more than its records"""
        return client <= self.records

    @transition("SendsOneAtATime", reads=("client",), actions=("Send",))
    def sends_one(self, step: tuple, before: Any, after: Any) -> bool:
        """a send moves one client by one, and only the first client sends its second record"""
        moved = [b - a for a, b in zip(before.client, after.client)]
        return max(moved) == 1 and not (step[1] == 1 and after.client[1] > 1)


class Unfused(CheckedStore):
    """The same machine with the engines' per-property path only."""

    def fused_invariants(self, names: Any) -> None:
        return None

    def fused_transitions(self, names: Any) -> None:
        return None


def _summary(result: Any) -> tuple:
    return (result.verdict, result.stats.distinct, result.stats.generated, result.stats.depth,
            [(v.property, [(t.step, t.state) for t in v.trace]) for v in result.violations])


@pytest.mark.parametrize("stop_at_first", [True, False])
@pytest.mark.parametrize("strategy", ["bfs", "dfs"])
def test_fused_checks_report_what_the_per_property_checks_report(stop_at_first, strategy):
    kwargs = {"records": 2, "max_copies": 1, "max_lost": 1}
    opts = ExploreOptions(check_deadlock=False, stop_at_first=stop_at_first, strategy=strategy)
    fused = explore(CheckedStore(**kwargs), opts)
    plain = explore(Unfused(**kwargs), opts)
    assert fused.verdict == "violated"
    if not stop_at_first:  # every property that can fail does, so the fused checks fell back several times
        assert {v.property for v in fused.violations} == {"NoDuplicates", "FewAppends", "SendsOneAtATime"}
    assert _summary(fused) == _summary(plain)


def test_fused_transitions_list_only_the_actions_a_property_applies_to():
    m = CheckedStore()
    only_send = m.fused_transitions(["SendsOneAtATime"])
    assert only_send is not None and set(only_send) == {"Send"}
    both = m.fused_transitions(["LogGrows", "SendsOneAtATime"])
    assert both is not None and set(both) == set(m.actions)  # LogGrows applies to every action
    s = m.state(client=(0, 0))
    t = m.state(client=(1, 0))
    assert both["Send"](s, ("Send", 0), t) is True
    assert both["Send"](s, ("Send", 0), m.state(client=(2, 0))) is False
    assert m.fused_transitions([]) is None and Machine.fused_transitions(m, ["LogGrows"]) is None


def test_a_fused_invariant_is_the_conjunction_on_every_reachable_state():
    m = CheckedStore(max_copies=1)
    names = [n for n, p in m.properties().items() if p.kind == "invariant"]
    fused = m.fused_invariants(names)
    assert fused is not None
    checks = [m.properties()[n].check for n in names]
    seen = [m.state(), m.state(client=(2, 2))]
    for s in list(seen):
        seen += [t for _, t in m.successors(s)]
    for s in seen:
        assert fused(s) == all(c(s) for c in checks)
    m.clear_caches()
    assert all(fused(s) == all(c(s) for c in checks) for s in seen)


class Bounded(ComposedTwoPhase):
    """TwoPhase with a declared constraint: at most two resource managers past WORKING."""

    @constraint("FewPrepared", reads=("rm_state",))
    def few_prepared(self, rm_state: tuple) -> bool:
        """at most two RMs left the working state"""
        return sum(1 for x in rm_state if x != 0) <= 2


class HandBounded(ComposedTwoPhase):
    def within_bounds(self, state: tuple) -> bool:
        rm = self.view(state).rm_state
        return sum(1 for x in rm if x != 0) <= 2


def test_a_declared_constraint_bounds_the_search_like_a_hand_written_one():
    declared = explore(Bounded(rms=4), ExploreOptions())
    hand = explore(HandBounded(rms=4), ExploreOptions())
    full = explore(ComposedTwoPhase(rms=4), ExploreOptions())
    assert (declared.verdict, declared.stats.distinct, declared.stats.generated, declared.stats.depth) == (
        hand.verdict, hand.stats.distinct, hand.stats.generated, hand.stats.depth)
    assert declared.stats.distinct < full.stats.distinct
    # a constraint is not a property, and the bound check survives pickling (plan rebuilt)
    assert "FewPrepared" not in Bounded.property_docs() and "FewPrepared" not in Bounded(rms=3).properties()
    copy = pickle.loads(pickle.dumps(Bounded(rms=4)))
    assert explore(copy, ExploreOptions()).stats.distinct == declared.stats.distinct
    par = explore(Bounded(rms=4), ExploreOptions(strategy="parallel", workers=2))
    assert par.stats.distinct == declared.stats.distinct


def test_a_machine_without_constraints_stays_unbounded_for_the_engines():
    from eoscheck.checker.explore.common import overrides
    assert not overrides(ComposedTwoPhase(rms=3), "within_bounds")
    assert overrides(Bounded(rms=3), "within_bounds")
    assert Bounded(rms=3).declared_within_bounds(Bounded(rms=3).state()) is True


def test_a_clock_stopped_at_zero_costs_no_lookup_but_stays_listed():
    stopped = Store(max_ticks=0)
    assert "Tick" in stopped.actions and "Tick" not in [r.action for r in stopped._plan.rules]
    assert "Tick" in [r.action for r in Store(max_ticks=1)._plan.rules]
    result = explore(stopped, ExploreOptions(check_deadlock=False))
    assert result.stats.coverage["Tick"].generated == 0


class Renamed(CheckedStore):
    """A subclass that renames one property and wraps another, as a preset may."""

    def properties(self) -> dict:
        from dataclasses import replace
        own = super().properties()
        wrapped = own["ClientsBounded"]
        return {"Unique": replace(own["NoDuplicates"], name="Unique"),
                "Bounded": replace(wrapped, name="Bounded", check=lambda s: wrapped.check(s))}


def test_fused_checks_follow_renamed_properties_and_refuse_wrapped_ones():
    m = Renamed(max_copies=1)
    assert m.fused_invariants(["Unique"]) is not None
    assert m.fused_invariants(["Unique", "Bounded"]) is None
    result = explore(m, ExploreOptions(check_deadlock=False, stop_at_first=False))
    assert {v.property for v in result.violations} == {"Unique"}


def test_the_fused_invariant_memo_is_bounded_and_dropped_when_it_does_not_pay(monkeypatch):
    from eoscheck.checker.compose import properties
    monkeypatch.setattr(properties, "FUSED_MEMO_CAP", 3)
    monkeypatch.setattr(properties, "FUSED_TRIAL", 4)
    m = CheckedStore(max_copies=1)
    names = [n for n, p in m.properties().items() if p.kind == "invariant"]
    expect = lambda s: all(m.properties()[n].check(s) for n in names)
    states = [m.state(client=(a, b)) for a in range(3) for b in range(3)]
    fused = m.fused_invariants(names)
    env = fused.__globals__
    # a trial of repeated states: the memo pays and stays, bounded by the cap
    assert [fused(states[0]) for _ in range(4)] == [expect(states[0])] * 4
    assert env["impl"] is env["memoised"]
    assert fused.__code__ is env["memoised"].__code__  # the engines' reference runs it directly
    assert [fused(s) for s in states] == [expect(s) for s in states]
    assert len(env["memo"]) <= 3
    # after clear_caches the trial starts again; a trial of distinct states drops the memo
    m.clear_caches()
    assert env["impl"] is env["counting"]
    assert [fused(s) for s in states] == [expect(s) for s in states]
    assert env["impl"] is env["plain"] and len(env["memo"]) == 0
    assert fused.__code__ is env["plain"].__code__
