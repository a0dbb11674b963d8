"""Session 26's vectors (``tests/data/kafka-unit-test-vectors.more15.json``): MESSAGE_TOO_LARGE batch splitting
(SenderTest's split tests: KAFKA-5494, KAFKA-8325) and a late failure of an expired batch after an idempotent epoch
bump (TransactionManagerTest testDuplicateSequenceAfterProducerReset: KAFKA-13794), pinned per profile; comparisons
that can fail; the split rule on its own."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conform_pins import assert_pinned, outcome_totals
from eoscheck.model.api.protocol import FEATURE_SINCE, PROFILES, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors
from eoscheck.model.producer.batch_split import remove_in_flight_batch, split_and_reenqueue, splits
from eoscheck.model.producer.partition_sequences import InFlightBatch, PartitionEntry

MORE15 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more15.json"
ALL = ("CLI-230", "CLI-231", "CLI-232", "CLI-233")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    if "kip-360" in p.lacks:
        return {}, dict.fromkeys(ALL, "kip-360")
    if "kafka-13794" in p.lacks:
        return {"CLI-233": "before KAFKA-13794 the late failure removes r2, of the same base sequence"}, {}
    return {}, {}


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more15_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE15), name, disagree, inexpressible)


def test_the_default_run_agrees() -> None:
    assert outcome_totals(harness.run_file(load_vectors(MORE15))) == {"agree": 4, "disagree": 0, "not expressible": 0}
    assert FEATURE_SINCE["kafka-13794"].first == (3, 1, 1) and FEATURE_SINCE["kafka-12152"].first == (2, 8, 0)


def _run_changed(vid: str, change: Callable[[dict], object], variant: str | None = None) -> str:
    data = json.loads(MORE15.read_text())
    data["vectors"] = [copy.deepcopy(v) for v in data["vectors"] if v["id"] == vid]
    change(data["vectors"][0])
    (v,) = harness.run_file(parse_vectors(data), variant).vectors
    return v.outcome


def test_the_split_comparisons_can_fail() -> None:
    # the split keeps the next sequence: expecting it moved disagrees
    assert _run_changed("CLI-230", lambda v: v["steps"][1]["expected"].update(next_sequence=4)) == harness.DISAGREE
    # the second split batch carries sequence 1, not a new one
    assert _run_changed("CLI-231", lambda v: v["steps"][4]["expected"]["request"].update(base_sequence=2)) \
        == harness.DISAGREE
    # a split that does not add up to the batch's records is not expressible
    assert _run_changed("CLI-232", lambda v: v["steps"][1]["input"].update(split_records=[1])) \
        == harness.NOT_EXPRESSIBLE
    # the big batch is not expired after its split
    assert _run_changed("CLI-232", lambda v: v["steps"][4]["expected"].update(expired=True)) == harness.DISAGREE


def test_the_late_failure_comparison_can_fail() -> None:
    assert _run_changed("CLI-233", lambda v: v["steps"][6]["expected"].update(has_inflight_batches=False)) \
        == harness.DISAGREE
    assert _run_changed("CLI-233", lambda v: v["steps"][6]["expected"].update(has_inflight_batches=False),
                        "kafka-3.0-3.1.0") == harness.AGREE


def test_the_split_rule_keeps_the_big_batchs_producer_and_sequences() -> None:
    big = InFlightBatch("r1", 5, 3, 7, 2)
    later = InFlightBatch("r9", 8, 1, 7, 2)
    e = PartitionEntry(7, 3, next_sequence=9, in_flight=(big, later))
    out = split_and_reenqueue(e, "r1", [2, 1], ["a", "b"], 2**31 - 1)
    assert [(b.name, b.base_sequence, b.records, b.epoch) for b in out.in_flight] == \
        [("a", 5, 2, 2), ("b", 7, 1, 2), ("r9", 8, 1, 2)]
    assert out.next_sequence == 9
    with pytest.raises(ValueError):
        split_and_reenqueue(e, "r1", [1, 1], ["a", "b"], 2**31 - 1)
    assert splits(10, 2) and not splits(10, 1) and not splits(7, 2)


def test_the_removal_by_sequence_takes_the_newer_batch() -> None:
    old = InFlightBatch("r1", 0, 1, 7, 1)
    new = InFlightBatch("r2", 0, 1, 7, 2)
    e = PartitionEntry(7, 2, next_sequence=1, in_flight=(new,))
    assert remove_in_flight_batch(e, old, by_identity=True).in_flight == (new,)
    assert remove_in_flight_batch(e, old, by_identity=False).in_flight == ()
