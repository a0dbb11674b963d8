"""Session 26's vectors (``tests/data/kafka-unit-test-vectors.more20.json``): the late success of a batch the producer
expired already, which runs ``handleCompletedBatch`` in every version (``model/producer/late_success.py``), pinned per
profile; comparisons that can fail; the rule on its own."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conform_pins import assert_pinned, outcome_totals
from eoscheck.model.api.protocol import PROFILES, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors
from eoscheck.model.producer.late_success import handle_late_completed_batch
from eoscheck.model.producer.partition_sequences import InFlightBatch, PartitionEntry

MORE20 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more20.json"
ALL = tuple(f"CLI-{n}" for n in range(330, 337))


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """The pin from the profile: the late success is handled alike in every KIP-360 client but for the removal and the
    reset: CLI-334 states 3.5.2 (KAFKA-13794's removal), CLI-335 3.0.0 (removal by base sequence, KAFKA-12152), CLI-336
    2.7.0 (neither); CLI-333 names the expiry's TimeoutException unwrapped (TransactionAbortableException from 4.1.0)."""
    p = protocol(name)
    if "kip-360" in p.lacks:
        return {}, dict.fromkeys(ALL, "kip-360")
    disagree: dict[str, str] = {}
    if p.eos.client_batch_error_wrapped_abortable:
        disagree["CLI-333"] = "the expiry's error is wrapped in TransactionAbortableException"
    by_sequence, reset = "kafka-13794" in p.lacks, "kafka-12152" in p.lacks
    if by_sequence:
        disagree["CLI-334"] = "before KAFKA-13794 the removal by base sequence takes r2"
    if not by_sequence or reset:
        disagree["CLI-335"] = "KAFKA-13794 keeps r2, or before KAFKA-12152 the drained stale partition restarts"
    if not reset:
        disagree["CLI-336"] = "from KAFKA-12152 handleCompletedBatch restarts nothing"
    return disagree, {}


def test_the_pins_name_the_profiles_the_brief_named() -> None:
    assert set(_derived("kafka-3.3-3.5")[0]) == {"CLI-335", "CLI-336"}
    assert set(_derived("kafka-3.0-3.1.0")[0]) == {"CLI-334", "CLI-336"}
    assert set(_derived("kafka-2.5")[0]) == set(_derived("kafka-2.7-2.8")[0]) == {"CLI-334", "CLI-335"}
    assert set(_derived("kafka-4.1.0")[0]) == {"CLI-333", "CLI-335", "CLI-336"}


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more20_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE20), name, disagree, inexpressible)


def test_each_vector_is_judged_under_its_tags_profile_by_default() -> None:
    run = harness.run_file(load_vectors(MORE20))
    assert outcome_totals(run) == {"agree": 7, "disagree": 0, "not expressible": 0}
    assert {v.id: v.variant for v in run.vectors if v.variant != "kafka-3.3-3.5"} == {
        "CLI-332": "kafka-4.1.0", "CLI-335": "kafka-3.0-3.1.0", "CLI-336": "kafka-2.7-2.8"}


def _run_changed(vid: str, change: Callable[[dict], object], variant: str | None = None) -> str:
    data = json.loads(MORE20.read_text())
    data["vectors"] = [copy.deepcopy(v) for v in data["vectors"] if v["id"] == vid]
    change(data["vectors"][0])
    (v,) = harness.run_file(parse_vectors(data), variant).vectors
    return v.outcome


def test_the_comparisons_can_fail() -> None:
    # the late success is handled: expecting it ignored, or the sequence and offset unmoved, disagrees
    assert _run_changed("CLI-330", lambda v: v["steps"][2]["expected"].update(ignored=True)) == harness.DISAGREE
    assert _run_changed("CLI-330", lambda v: v["steps"][2]["expected"].update(last_acked_sequence=None)) \
        == harness.DISAGREE
    # without the late answer the next loop bumps the epoch; with it, expecting the bump disagrees
    assert _run_changed("CLI-331", lambda v: v["steps"][5]["expected"].update(producer_epoch=1)) == harness.DISAGREE
    def without_late_answer(v: dict) -> None:
        del v["steps"][4]
        v["steps"][4]["expected"] = {"unresolved": False, "producer_epoch": 1}
    assert _run_changed("CLI-331", without_late_answer) == harness.AGREE
    # DUPLICATE_SEQUENCE_NUMBER carries no offset: expecting r2's would disagree
    assert _run_changed("CLI-332", lambda v: v["steps"][4]["expected"].update(last_acked_offset=6)) \
        == harness.DISAGREE
    # r2 stays tracked from KAFKA-13794 (its answer then completes it); expecting it gone disagrees
    assert _run_changed("CLI-334", lambda v: v["steps"][6]["expected"].update(has_inflight_batches=False)) \
        == harness.DISAGREE
    # 2.7.0's reset: expecting 3.0.0's next sequence disagrees
    assert _run_changed("CLI-336", lambda v: v["steps"][6]["expected"].update(next_sequence=1)) == harness.DISAGREE
    # the abortable error stays
    assert _run_changed("CLI-333", lambda v: v["steps"][2]["expected"].update(client_state="IN_TRANSACTION")) \
        == harness.DISAGREE


def _late(entry: PartitionEntry, batch: InFlightBatch, base_offset: int, producer: tuple[int, int] = (7, 0), *,
          by_identity: bool = True, reset: bool = False) -> PartitionEntry:
    return handle_late_completed_batch(entry, batch, base_offset, max_seq=2**31 - 1, producer=producer,
                                       by_identity=by_identity, reset_drained_stale=reset)


def test_the_rule_on_its_own() -> None:
    r1 = InFlightBatch("r1", 0, 2, 7, 0)
    e = PartitionEntry(7, 0, next_sequence=2, last_acked_sequence=-1, last_acked_offset=4)
    out = _late(e, r1, 10)
    assert (out.last_acked_sequence, out.last_acked_offset, out.next_sequence) == (1, 11, 2)
    # INVALID_OFFSET: the offset stays; a smaller sequence or offset never moves them back
    assert _late(e, r1, -1).last_acked_offset == 4
    ahead = e._replace(last_acked_sequence=5, last_acked_offset=20)
    assert _late(ahead, r1, 10) == ahead
    # before KAFKA-13794 the removal by base sequence takes a newer batch that restarted at 0
    newer = InFlightBatch("r2", 0, 1, 7, 1)
    bumped = PartitionEntry(7, 1, next_sequence=1, in_flight=(newer,))
    assert _late(bumped, r1, -1, (7, 1)).in_flight == (newer,)
    assert _late(bumped, r1, -1, (7, 1), by_identity=False).in_flight == ()
    # before KAFKA-12152 a stale batch leaving nothing in flight restarts the partition at 0 under the producer's pair
    old = PartitionEntry(7, 0, next_sequence=2)
    out = _late(old, r1, 3, (7, 1), reset=True)
    assert (out.epoch, out.next_sequence, out.last_acked_sequence, out.last_acked_offset) == (1, 0, -1, 4)
    assert _late(old, r1, 3, (7, 1)).next_sequence == 2
