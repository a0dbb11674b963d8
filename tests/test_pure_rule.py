"""Memoised pure rules (``model.machines.pure_rule``) and the pipeline machine that uses them."""

from __future__ import annotations

import pickle

import pytest
from eoscheck.checker.compose.machine import Composed
from eoscheck.checker.compose.testing import compare_memo
from eoscheck.model.machines.pure_rule import PureRule
from eoscheck.model.registry import EOS_PIPELINE

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


def _recomputing(like: Composed) -> Composed:
    """The same configuration with a fresh plan that memoises nothing."""
    clone = pickle.loads(pickle.dumps(like))
    clone.memoize = False
    clone.__setstate__(clone.__getstate__())
    return clone


@pytest.mark.parametrize("variant", ["eos-beta-kip447", "kip890-tv2", "eos-beta-pre-kip447"])
def test_pipeline_successors_with_warm_memos_equal_recomputed_ones(variant: str) -> None:
    # a memo keyed on fewer inputs than its rule reads would answer from another state's call;
    # compare_memo checks every state it reaches (successors, every property, canonical form) against
    # a twin that recomputes everything, where a fresh machine per sampled state took 19% of the suite
    warm = EOS_PIPELINE.machine(variant, bounds={"records": 1, "failovers": 1})
    report = compare_memo(lambda memo: warm if memo else _recomputing(warm), max_states=3_000)
    assert report.states == 3_000 and report.steps > report.states
