"""Session 27's vectors (``tests/data/kafka-unit-test-vectors.more21.json``): TransactionMarkerRequestCompletionHandlerTest,
the transaction coordinator's reaction to one marker entry's WriteTxnMarkers answer or disconnect
(``model.api.coordinator.handle_marker_response`` / ``handle_marker_disconnect``, ``model.transactions.markers``), pinned per
profile (KAFKA-9749, 2.5.0: KAFKA_STORAGE_ERROR retriable); comparisons that can fail; the rules on their own."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conform_pins import assert_coverage_table_names_vectors, assert_pinned, outcome_totals
from eoscheck.model.api import coordinator as api
from eoscheck.model.api.protocol import PROFILE_TABLE, PROFILES, SWITCH_HISTORY, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors
from eoscheck.model.coordinator.txn_log import NO_METADATA
from eoscheck.model.errors import Errors
from eoscheck.model.state import TxnMetadata
from eoscheck.model.transactions.codes import TxnState
from eoscheck.model.transactions.markers import on_marker_response

MORE21 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more21.json"
ALL = tuple(f"MRK-{n:02d}" for n in range(1, 21))


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """MRK-18 is the retry of KAFKA-9749 (2.5.0), MRK-20 2.4.1's IllegalStateException for the same answer; every other
    vector agrees under every profile (the handler's other rules are the same from 2.0.0 to 4.2.0-rc1)."""
    if protocol(name).marker_storage_error_retriable:
        return {"MRK-20": "from KAFKA-9749 (2.5.0) KAFKA_STORAGE_ERROR is retried"}, {}
    return {"MRK-18": "before KAFKA-9749 (2.5.0) KAFKA_STORAGE_ERROR is an IllegalStateException"}, {}


def test_the_pins_name_the_versions_of_kafka_9749() -> None:
    assert SWITCH_HISTORY["marker_storage_error_retriable"] == (((2, 0, 0), False), ((2, 5, 0), True))
    assert {n for n, p in PROFILE_TABLE.items() if p.protocol.marker_storage_error_retriable} == {
        n for n, p in PROFILE_TABLE.items() if p.first >= (2, 5, 0)}
    assert set(_derived("kafka-2.5")[0]) == {"MRK-20"} and set(_derived("kafka-2.4.1")[0]) == {"MRK-18"}


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more21_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE21), name, disagree, inexpressible)


def test_each_vector_is_judged_under_its_tags_profile_by_default() -> None:
    run = harness.run_file(load_vectors(MORE21))
    assert outcome_totals(run) == {"agree": 20, "disagree": 0, "not expressible": 0}
    assert [v.id for v in run.vectors] == list(ALL)
    assert {v.id: v.variant for v in run.vectors if v.variant != "kafka-2024-10"} == {"MRK-20": "kafka-2.4.1"}
    # every step compared something and read every input field
    for v in run.vectors:
        assert all(s.compared for s in v.steps), v.id
        assert not [f for s in v.steps for f in s.unchecked], v.id


def test_every_test_of_the_class_has_a_row_naming_its_vectors() -> None:
    tests = {v["source"]["test"] for v in json.loads(MORE21.read_text())["vectors"]}
    assert len(tests) == 19
    assert_coverage_table_names_vectors(MORE21)


def _run_changed(vid: str, change: Callable[[dict], object], variant: str | None = None) -> str:
    data = json.loads(MORE21.read_text())
    data["vectors"] = [copy.deepcopy(v) for v in data["vectors"] if v["id"] == vid]
    change(data["vectors"][0])
    (v,) = harness.run_file(parse_vectors(data), variant).vectors
    return v.outcome


def _step(v: dict) -> dict:
    return v["steps"][0]["input"]


def test_the_comparisons_can_fail() -> None:
    # the disconnect re-enqueues only for the entry's own coordinator epoch and a lookup that finds the metadata
    assert _run_changed("MRK-01", lambda v: _step(v).update(coordinator_epoch=1)) == harness.DISAGREE
    assert _run_changed("MRK-01", lambda v: v["initial_state"]["coordinator"].update(
        get_transaction_state="NOT_COORDINATOR")) == harness.DISAGREE
    # an error map for the producer id: no exception; the check comes before the lookup
    assert _run_changed("MRK-02", lambda v: _step(v).update(errors_by_producer_id={"0": {"topic1-0": "NONE"}})) \
        == harness.DISAGREE
    assert _run_changed("MRK-02", lambda v: _step(v).update(errors_by_producer_id={"7": {"topic1-0": "NONE"}})) \
        == harness.AGREE
    assert _run_changed("MRK-02", lambda v: v["initial_state"]["coordinator"].update(
        get_transaction_state="NOT_COORDINATOR")) == harness.AGREE
    # a retriable answer keeps the partition and does not complete
    assert _run_changed("MRK-03", lambda v: _step(v).update(error="NOT_ENOUGH_REPLICAS")) == harness.DISAGREE
    # the owner that still holds the id at the entry's epoch does not drop it
    assert _run_changed("MRK-04", lambda v: v["initial_state"]["coordinator"].clear()) == harness.DISAGREE
    assert _run_changed("MRK-06", lambda v: v["initial_state"]["coordinator"].update(coordinator_epoch=0)) \
        == harness.DISAGREE
    # a changed coordinator epoch drops the entry before a partition's answer is read, a fatal one too
    assert _run_changed("MRK-06", lambda v: _step(v).update(error="CORRUPT_MESSAGE")) == harness.AGREE
    assert _run_changed("MRK-07", lambda v: _step(v).update(error="REQUEST_TIMED_OUT")) == harness.DISAGREE
    assert _run_changed("MRK-09", lambda v: _step(v).update(error="NONE")) == harness.DISAGREE
    # UNSUPPORTED_VERSION (no test of its own) is answered as UNSUPPORTED_FOR_MESSAGE_FORMAT, REQUEST_TIMED_OUT as a retry
    assert _run_changed("MRK-19", lambda v: _step(v).update(error="UNSUPPORTED_VERSION")) == harness.AGREE
    assert _run_changed("MRK-14", lambda v: _step(v).update(error="REQUEST_TIMED_OUT")) == harness.AGREE
    assert _run_changed("MRK-14", lambda v: _step(v).update(error="UNSUPPORTED_VERSION")) == harness.DISAGREE
    # under 2.4.1 the storage error throws; every other retriable answer is retried there too
    assert _run_changed("MRK-18", lambda v: None, "kafka-2.4.1") == harness.DISAGREE
    assert _run_changed("MRK-17", lambda v: None, "kafka-2.4.1") == harness.AGREE


def _prepared(partitions: tuple[int, ...] = (0,)) -> TxnMetadata:
    return TxnMetadata(True, 0, 0, 0, -1, int(TxnState.PREPARE_COMMIT), False, int(TxnState.COMPLETE_COMMIT), partitions,
                       -1, 0)


def test_the_rules_on_their_own() -> None:
    p, old = protocol("kafka-2024-10"), protocol("kafka-2.4.1")
    st = api.CoordinatorState(_prepared((0, 1)), 0)
    # one partition done: the other still waits, nothing written
    ans, after = api.handle_marker_response(st, 0, int(Errors.NONE), p, marker_coordinator_epoch=3, coordinator_epoch=3)
    assert ans == api.MarkerAnswer(False, False, False) and after.metadata.partitions == (1,)
    ans, done = api.handle_marker_response(after, 1, int(Errors.NONE), p)
    assert ans.completed and done.metadata.state == TxnState.COMPLETE_COMMIT
    # another coordinator epoch, or no error map, whatever the answer
    for err in (Errors.NONE, Errors.CORRUPT_MESSAGE, Errors.NOT_LEADER_OR_FOLLOWER):
        assert api.handle_marker_response(st, 0, int(err), p, marker_coordinator_epoch=3, coordinator_epoch=4) == (
            api.MarkerAnswer(False, True, False), st)
    with pytest.raises(ValueError):
        api.handle_marker_response(st._replace(lookup_error=int(Errors.NOT_COORDINATOR)), 0, None, p)
    # a lookup error the handler does not name, or no metadata: IllegalStateException, for a disconnect too
    for bad in (st._replace(lookup_error=int(Errors.COORDINATOR_NOT_AVAILABLE)), st._replace(metadata=NO_METADATA)):
        with pytest.raises(ValueError):
            api.handle_marker_response(bad, 0, int(Errors.NONE), p)
        with pytest.raises(ValueError):
            api.handle_marker_disconnect(bad)
    assert api.handle_marker_disconnect(st, marker_coordinator_epoch=1, coordinator_epoch=1) == api.MarkerAnswer(
        True, False, False)
    assert api.handle_marker_disconnect(st, marker_coordinator_epoch=1, coordinator_epoch=2).abandon
    assert api.handle_marker_disconnect(st._replace(loading=True)).abandon
    # KAFKA-9749: the profile's switch reaches the rule
    assert api.handle_marker_response(st, 0, int(Errors.KAFKA_STORAGE_ERROR), p)[0].retry
    with pytest.raises(ValueError):
        api.handle_marker_response(st, 0, int(Errors.KAFKA_STORAGE_ERROR), old)
    meta = _prepared()
    assert on_marker_response(meta, 0, int(Errors.REQUEST_TIMED_OUT), storage_error_retriable=False).retry
    with pytest.raises(ValueError):
        on_marker_response(meta, 0, int(Errors.KAFKA_STORAGE_ERROR), storage_error_retriable=False)
    assert on_marker_response(meta, 0, int(Errors.UNSUPPORTED_VERSION)).meta.partitions == ()
