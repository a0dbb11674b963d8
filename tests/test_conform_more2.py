"""Session 15's vectors (``tests/data/kafka-unit-test-vectors.more2.json``), written by eoscheck's
developers for tests of the sample's files that no earlier vector covered, and the rules and harness
steps they led to, checked directly."""

from __future__ import annotations

import json
from pathlib import Path

from conform_pins import assert_pinned, run_vector, vectors_by_id
from eoscheck.model.api import client as client_api
from eoscheck.model.api import coordinator as coord
from eoscheck.model.api import leader as leader_api
from eoscheck.model.api.protocol import PROFILES, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.coordinator.producer_ids import ProducerIdBlocks, block_accepted
from eoscheck.model.coordinator.txn_log import NO_METADATA
from eoscheck.model.errors import Errors
from eoscheck.model.producer.txn_offsets_client import FATAL, on_txn_offset_commit_error
from eoscheck.model.producer.txn_responses import APIS, on_txn_response
from eoscheck.model.transactions.codes import NO_PENDING, TxnState
from eoscheck.model.transactions.metadata import TxnMeta

SNAPSHOT = protocol("kafka-2024-10")
MORE2 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more2.json"


def _empty(pending: int = NO_PENDING) -> TxnMeta:
    return TxnMeta(True, 1, 1, 0, -1, int(TxnState.EMPTY), False, pending, ())


# --- rules ---------------------------------------------------------------------------------------------

def test_append_callback_completes_only_on_the_same_cached_metadata() -> None:
    """TransactionStateManager.appendTransactionToLog's callback (testAppendFailToCoordinatorLoadingError,
    testAppendTransactionToLogWhileProducerFenced, ...WhilePendingStateChanged, testPendingStateNotResetOnRetryAppend)."""
    transit = coord.prepare_add_partitions(_empty(), (0,)).metadata
    cached = _empty(pending=int(TxnState.ONGOING))
    ok = coord.append_transaction_to_log(coord.CacheAtAppend(cached, 10), 10, transit, int(Errors.NONE))
    assert (ok.error, ok.exception, ok.metadata.state, ok.metadata.pending_state) == \
        (Errors.NONE, "", TxnState.ONGOING, NO_PENDING)
    assert ok.metadata.partitions == (0,)
    # the partition emigrated and is loading again; another coordinator epoch; gone
    loading = coord.append_transaction_to_log(coord.CacheAtAppend(NO_METADATA, 11, loading=True), 10, transit, 0)
    assert loading.error == Errors.COORDINATOR_LOAD_IN_PROGRESS
    moved = coord.append_transaction_to_log(coord.CacheAtAppend(cached, 0), 10, transit, 0)
    assert moved.error == Errors.NOT_COORDINATOR and moved.metadata == cached
    gone = coord.append_transaction_to_log(coord.CacheAtAppend(NO_METADATA, 10), 10, transit, 0)
    assert gone.error == Errors.NOT_COORDINATOR
    # no pending state left to complete
    lost = coord.append_transaction_to_log(coord.CacheAtAppend(_empty(), 10), 10, transit, 0)
    assert lost.exception == "IllegalStateException"
    # a failed append clears the pending state, unless the caller retries on it
    failed = coord.append_transaction_to_log(coord.CacheAtAppend(cached, 10), 10, transit,
                                             int(Errors.UNKNOWN_TOPIC_OR_PARTITION))
    assert (failed.error, failed.metadata.pending_state) == (Errors.COORDINATOR_NOT_AVAILABLE, NO_PENDING)
    kept = coord.append_transaction_to_log(coord.CacheAtAppend(cached, 10), 10, transit,
                                           int(Errors.UNKNOWN_TOPIC_OR_PARTITION), retry_on_error=True)
    assert kept.metadata == cached
    # another coordinator epoch's metadata is not touched by a failure either
    other = coord.append_transaction_to_log(coord.CacheAtAppend(cached, 0), 10, transit, int(Errors.NOT_ENOUGH_REPLICAS))
    assert other.metadata == cached


def test_transaction_timeout_validation() -> None:
    for ms, ok in ((1, True), (0, False), (-1, False), (900000, True), (900001, False)):
        assert coord.valid_txn_timeout(ms, SNAPSHOT) is ok, ms
    req = coord.InitProducerIdRequest("t", txn_timeout_ms=900001)
    assert coord.handle_init_producer_id(coord.CoordinatorState(NO_METADATA, 0), req, SNAPSHOT)[0].error == \
        Errors.INVALID_TRANSACTION_TIMEOUT


def test_unsupported_version_is_fatal_for_every_transactional_request() -> None:
    """TxnRequestHandler.onComplete fails on the client's version mismatch before any handler reads
    the answer (testUnsupportedInitTransactions, testUnsupportedFindCoordinator)."""
    for api in APIS:
        r = on_txn_response(api, int(Errors.UNSUPPORTED_VERSION), can_bump_epoch=True)
        assert (r.action, r.exception) == ("fatal", "UnsupportedVersionException"), api
    assert on_txn_offset_commit_error(int(Errors.UNSUPPORTED_VERSION)) == (FATAL, "UnsupportedVersionException")
    # another unexpected error keeps the generic exception
    assert on_txn_response("InitProducerId", int(Errors.UNKNOWN_SERVER_ERROR), can_bump_epoch=True).exception == \
        "KafkaException"


def test_a_malformed_producer_id_block_is_refused() -> None:
    """RPCProducerIdManager.handleAllocateProducerIdsResponse's sanity check (testInvalidRanges)."""
    fresh = ProducerIdBlocks(0, ())
    assert block_accepted(fresh, 0, 0, 10)
    assert not block_accepted(fresh, 0, -1, 10)
    assert not block_accepted(fresh, 0, 0, -1)
    assert not block_accepted(fresh, 0, 2**63 - 2, 10)
    assert block_accepted(fresh, 0, 2**63 - 11, 10)


def test_a_follower_append_needs_increasing_offsets() -> None:
    def b(offset: int, records: int = 1) -> leader_api.ProduceBatch:
        return leader_api.ProduceBatch(1, 0, 0, records - 1, first_offset=offset)

    assert leader_api.offsets_monotonic((b(0), b(1), b(2)))
    assert not leader_api.offsets_monotonic((b(0), b(1), b(3), b(2), b(4)))
    assert not leader_api.offsets_monotonic((b(0, records=3), b(2)))  # overlaps the first batch's last offset
    assert leader_api.offsets_monotonic((b(0, records=3), b(3)))


def test_an_empty_control_batch_starts_and_ends_nothing() -> None:
    state = leader_api.LeaderState((), 15)
    res, after = leader_api.append_empty_control_batch(state, 23423, 15)
    (entry,) = after.producers
    assert res.result == leader_api.APPENDED and entry.current_txn_first_offset == -1 and after.log_end_offset == 16
    # a producer with an open transaction keeps it
    res, st = leader_api.append_batch(leader_api.LeaderState((), 0), leader_api.ProduceBatch(7, 0, 0, 0, transactional=True),
                                      SNAPSHOT)
    _, st2 = leader_api.append_empty_control_batch(st, 7, -1)
    assert st2.producers == st.producers and st2.log_end_offset == 2


def test_has_ongoing_transaction() -> None:
    for state in ("IN_TRANSACTION", "COMMITTING_TRANSACTION", "ABORTING_TRANSACTION", "ABORTABLE_ERROR"):
        assert client_api.has_ongoing_transaction(state), state
    for state in ("UNINITIALIZED", "INITIALIZING", "READY", "FATAL_ERROR"):
        assert not client_api.has_ongoing_transaction(state), state


# --- harness steps -------------------------------------------------------------------------------------

def test_retry_on_error_is_read() -> None:
    sm71 = json.loads(json.dumps(vectors_by_id(MORE2)["SM-71"]))
    sm71["steps"][0]["input"]["retry_on_error"] = False
    report = run_vector(sm71)
    assert report.outcome == harness.DISAGREE
    assert {d.field for _, d in report.differences} == {"state_after.pending_state"}


def test_truncation_rebuilds_from_the_log_and_refuses_a_snapshot_below() -> None:
    prod64 = json.loads(json.dumps(vectors_by_id(MORE2)["PROD-64"]))
    assert run_vector(prod64).outcome == harness.AGREE
    # a snapshot at offset 1 (taken after the first batch) is loaded (session 16): the state is the
    # snapshot's, the one at 2 is deleted, and nothing is left to replay or snapshot again
    prod64["steps"][2]["input"] = {"call": "takeSnapshot"}
    prod64["steps"].insert(1, {"input": {"call": "takeSnapshot"}, "expected": {}})
    prod64["steps"][4]["expected"] = {**prod64["steps"][4]["expected"], "snapshot_offsets": [1]}
    report = run_vector(prod64)
    assert report.outcome == harness.AGREE
    # truncating at the log end (2) changes nothing: the second batch's sequence 1 stays the last
    keep = json.loads(json.dumps(vectors_by_id(MORE2)["PROD-64"]))
    keep["steps"][3]["input"]["offset"] = 2
    assert run_vector(keep).outcome == harness.DISAGREE
    keep["steps"][3]["expected"] = {"state_after": {"1": {"last_seq": 1}}}
    assert run_vector(keep).outcome == harness.AGREE
    # producers given in the initial state have no batches in the log to rebuild them from
    given = json.loads(json.dumps(vectors_by_id(MORE2)["PROD-64"]))
    given["initial_state"]["producers"] = {"9": {"epoch": 0, "last_seq": 4}}
    report = run_vector(given)
    assert report.outcome == harness.NOT_EXPRESSIBLE and "no batches in the log" in report.reason


def test_an_unsent_batch_expiring_leaves_an_idempotent_producer_alone() -> None:
    cli65 = json.loads(json.dumps(vectors_by_id(MORE2)["CLI-65"]))
    cli65["steps"][1]["expected"] = {"client_state": "ABORTABLE_ERROR"}
    assert run_vector(cli65).outcome == harness.DISAGREE  # an idempotent producer has no abortable error
    cli63 = json.loads(json.dumps(vectors_by_id(MORE2)["CLI-63"]))
    cli63["initial_state"]["producer"]["state"] = "ABORTING_TRANSACTION"
    cli63["steps"] = cli63["steps"][1:]  # an abort in progress stays one
    cli63["steps"][1]["expected"] = {"client_state": "ABORTING_TRANSACTION"}
    assert run_vector(cli63).outcome == harness.AGREE


def test_an_invalid_block_answer_is_reported() -> None:
    pidm = json.loads(json.dumps(vectors_by_id(MORE2)["PIDM-10"]))
    pidm["steps"][1]["input"]["event"] = "controller grants ProducerIdsBlock(broker 0, start 0, length 10)"
    report = run_vector(pidm)
    assert report.outcome == harness.DISAGREE
    # the valid block of ten ids then serves every later call
    assert {(s, d.field) for s, d in report.differences} == {(2, "block_accepted"), (3, "error"), (5, "error"), (7, "error")}


# --- the file's outcome, pinned per profile --------------------------------------------------------------

#: the KIP-360 producer client's steps (the interface's client is the 2.5+ client)
_KIP360 = tuple(f"CLI-{n}" for n in range(60, 71))


#: read at 1eb7644, where the expired batch's TimeoutException is also the manager's lastError; from KAFKA-19176
#: (4.1.0) the lastError is a TransactionAbortableException around it (the batch still fails with the
#: TimeoutException, and 4.1.0's tests assert that only), so these two disagree where kafka.eos's ``client_batch_error_wrapped_abortable`` is set
_KAFKA_19176 = ("CLI-63", "CLI-64")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    disagree = {v: "KAFKA-19176" for v in _KAFKA_19176} if p.eos.client_batch_error_wrapped_abortable else {}
    return disagree, ({v: "kip-360" for v in _KIP360} if "kip-360" in p.lacks else {})


def test_the_more2_vectors_totals_are_pinned() -> None:
    run = harness.run_file(load_vectors(MORE2))
    assert run.variant == "kafka-2024-10"
    assert len(run.vectors) == 28 and all(v.outcome == harness.AGREE for v in run.vectors)


def test_the_more2_vectors_outcome_is_pinned_per_profile() -> None:
    vf = load_vectors(MORE2)
    assert not _derived("kafka-2.5")[1] and len(_derived("kafka-2.4.1")[1]) == 11
    assert set(_derived("kafka-later-trunk")[0]) == set(_KAFKA_19176) and not _derived("kafka-2024-10")[0]
    for name in PROFILES:
        disagree, inexpressible = _derived(name)
        assert_pinned(vf, name, disagree, inexpressible)


def test_the_file_repeats_no_earlier_vector_or_test() -> None:
    data = json.loads(MORE2.read_text())
    assert "WRITTEN BY EOSCHECK'S DEVELOPERS (session 15)" in data["schema"]["description"]
    assert data["counts"]["total"] == len(data["vectors"]) == 28
    ids = [v["id"] for v in data["vectors"]]
    assert len(set(ids)) == len(ids)
    for other in ("sample", "written", "client", "broker", "more"):
        earlier = json.loads((MORE2.parent / f"kafka-unit-test-vectors.{other}.json").read_text())
        assert not set(ids) & {v["id"] for v in earlier["vectors"]}, other
        tests = {(v["source"]["file"], v["source"]["test"]) for v in earlier["vectors"]}
        assert not {(v["source"]["file"], v["source"]["test"]) for v in data["vectors"]} & tests, other
