"""Memoised pure rules (``model.machines.pure_rule``) and the pipeline machine that uses them."""

from __future__ import annotations

import pickle

import pytest
from eoscheck.model.machines.pure_rule import PureRule
from eoscheck.model.registry import EOS_PIPELINE
from reachable_states import reachable

CALLS: list[tuple] = []


def scaled(a: int, b: int, *, factor: int) -> int:
    CALLS.append((a, b, factor))
    return (a + b) * factor


def test_each_distinct_call_is_computed_once_with_the_fixed_arguments() -> None:
    CALLS.clear()
    rule = PureRule(scaled, factor=3)
    assert [rule(1, 2), rule(1, 2), rule(2, 1), rule(1, 2)] == [9, 9, 9, 9]
    assert CALLS == [(1, 2, 3), (2, 1, 3)]


def test_a_shipped_rule_leaves_its_memo_behind_and_still_works() -> None:
    rule = PureRule(scaled, factor=2)
    rule(1, 1)
    shipped = pickle.loads(pickle.dumps(rule))
    assert shipped.memo == {} and shipped.fixed == {"factor": 2}
    assert shipped(1, 1) == 4


@pytest.mark.parametrize("variant", ["eos-beta-kip447", "kip890-tv2", "eos-beta-pre-kip447"])
def test_pipeline_successors_with_warm_memos_equal_a_fresh_machine(variant: str) -> None:
    # a memo keyed on fewer inputs than its rule reads would answer from another state's call
    bounds = {"records": 1, "failovers": 1}
    warm = EOS_PIPELINE.machine(variant, bounds=bounds)
    states = reachable(warm, 3_000)  # warms every memo along the way
    for s in states[::7]:
        fresh = EOS_PIPELINE.machine(variant, bounds=bounds)
        assert list(warm.successors(s)) == list(fresh.successors(s))
        for name, prop in warm.properties().items():
            if prop.kind == "invariant":
                assert prop.check(s) == fresh.properties()[name].check(s), name
