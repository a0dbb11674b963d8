"""The vectors eoscheck's developers wrote from Kafka's broker-side unit tests at the sample's commit
(``tests/data/kafka-unit-test-vectors.broker.json``, not Kafka's set; session 13): their outcome is
pinned per conform profile so a regression in a rule or in the harness fails here, and the rules
they led to are checked directly."""

from __future__ import annotations

import json
from pathlib import Path

from conform_pins import Outcome, assert_derived_matches_listed, assert_pinned_per_profile, outcome_totals
from eoscheck.model.api import group as group_api
from eoscheck.model.api import leader as leader_api
from eoscheck.model.api.protocol import protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors
from eoscheck.model.errors import Errors
from eoscheck.model.partition.validation import AppendOrigin
from eoscheck.model.partition.verification import (
    produce_verification_error,
    superseded_verification,
    verification_callback_errors,
    verification_top_level_error,
)

BROKER = Path(__file__).parent / "data" / "kafka-unit-test-vectors.broker.json"


def _one(vid: str) -> dict:
    data = json.loads(BROKER.read_text())
    data["vectors"] = [v for v in data["vectors"] if v["id"] == vid]
    assert data["vectors"], vid
    return data


def _run_one(data: dict, variant: str | None = None) -> harness.VectorReport:
    (report,) = harness.run_file(parse_vectors(data, str(BROKER)), variant).vectors
    return report


_KIP890 = ("BRK-PSM-07", "BRK-PSM-08", "BRK-UL-10", "BRK-UL-13", "BRK-APM-06", "BRK-UL-11", "BRK-UL-12", "BRK-RM-01", "BRK-RM-02", "BRK-RM-03",
           "BRK-RM-04", "BRK-RM-05", "BRK-RM-06", "BRK-RM-07", "BRK-APM-01", "BRK-APM-02", "BRK-APM-03", "BRK-APM-04",
           "BRK-APM-05")
# BRK-GC-01 and BRK-OMM-08: OffsetFetch with require_stable, which came with KIP-447 (2.5.0)
_KIP447 = ("BRK-GC-02", "BRK-GC-03", "BRK-OMM-03", "BRK-OMM-04", "BRK-OMM-05", "BRK-OMM-06", "BRK-OMM-07", "BRK-GC-01",
           "BRK-OMM-08")
_TV2 = ("BRK-TMC-01", "BRK-TMC-02", "BRK-TMC-03")

#: profile -> ({vector: why it disagrees}, {vector: the feature it needs that the version lacks, or
#: 'out of scope'}); every other vector of the broker file agrees. A disagreement here is a real
#: behaviour of that version, not a model bug.
PROFILE_OUTCOMES: dict[str, Outcome] = {
    "kafka-2024-10": ({}, {}),
    "kafka-later-trunk": ({}, {}),
    "kafka-3.8-3.9": ({}, {v: "transaction-version-2" for v in _TV2}),
    "kafka-2.0.1-2.3": ({
        # before KIP-360 (2.5) a producer the leader has no state for gets UNKNOWN_PRODUCER_ID for a
        # sequence other than 0: the test's append after expiry is refused
        "BRK-PSM-05": "the expired producer's sequence 1 is UNKNOWN_PRODUCER_ID, not accepted",
        "BRK-PSM-13": "the producer reloaded without state: its sequence 2 is UNKNOWN_PRODUCER_ID, not accepted",
        # KAFKA-7190 shipped in 2.4.0; 2.0 .. 2.3's truncateAndReload at the map end offset called
        # truncateHead: producer 1's only batch is below the log start
        "BRK-PSM-15": "moving the log start offset to 1 evicts producer 1",
    }, {**{v: "transaction-version-2" for v in _TV2}, **{v: "kip-890-verification" for v in _KIP890},
        **{v: "kip-447" for v in _KIP447},
        # the vector's coordinator answers COORDINATOR_LOAD_IN_PROGRESS through a failed verification
        "BRK-KA-01": "kafka-15449"}),
}


def test_the_broker_vectors_totals_are_pinned() -> None:
    run = harness.run_file(load_vectors(BROKER))
    assert run.variant == "kafka-2024-10"
    assert outcome_totals(run) == {harness.AGREE: len(run.vectors), harness.DISAGREE: 0, harness.NOT_EXPRESSIBLE: 0}


def test_a_top_level_cluster_authorization_error_reaches_the_producer_as_invalid_txn_state() -> None:
    """BRK-APM-05 (session 25): AddPartitionsToTxnManager hides the broker's own CLUSTER_AUTHORIZATION_FAILED; another
    top-level error passes to every partition as it is."""
    assert verification_top_level_error(int(Errors.CLUSTER_AUTHORIZATION_FAILED)) == Errors.INVALID_TXN_STATE
    assert verification_top_level_error(int(Errors.NOT_COORDINATOR)) == Errors.NOT_COORDINATOR
    data = json.loads(BROKER.read_text())
    (vector,) = [v for v in data["vectors"] if v["id"] == "BRK-APM-05"]
    vector["steps"][0]["input"]["top_level_error"] = "NOT_COORDINATOR"
    assert _run_one({**data, "vectors": [vector]}).outcome == harness.DISAGREE


def test_the_header_says_who_wrote_the_vectors() -> None:
    data = json.loads(BROKER.read_text())
    assert "WRITTEN BY EOSCHECK'S DEVELOPERS" in data["schema"]["description"]
    written = json.loads((BROKER.parent / "kafka-unit-test-vectors.written.json").read_text())
    assert data["source"]["commit"] == written["source"]["commit"]
    assert data["counts"]["total"] == len(data["vectors"])
    assert all(v["source"].get("test") and v["source"].get("file") for v in data["vectors"])
    assert not {v["id"] for v in data["vectors"]} & {v["id"] for v in written["vectors"]}


def _derived(name: str) -> Outcome:
    """The outcome a profile should give, from what its version lacks and does: the first needed
    feature it lacks makes a vector inexpressible; a broker before KIP-360 answers an unknown
    producer's sequence other than 0 UNKNOWN_PRODUCER_ID (BRK-PSM-05, -13); one before KAFKA-7190
    evicts producers below the log start offset (BRK-PSM-15)."""
    p = protocol(name)
    needs: dict[str, list[str]] = {v: ["transaction-version-2"] for v in _TV2}
    for v in _KIP890:
        needs[v] = ["kip-890-verification"] + (["transaction-abortable"] if v == "BRK-APM-04" else [])
    for v in _KIP447:
        needs[v] = ["kip-447"]
    needs["BRK-KA-01"] = ["kafka-15449"]
    inexpressible = {v: f[0] for v, fs in needs.items() if (f := [x for x in fs if x in p.lacks])}
    disagree: dict[str, str] = {}
    if p.broker_unknown_producer != "accept":
        disagree.update({v: "UNKNOWN_PRODUCER_ID before KIP-360" for v in ("BRK-PSM-05", "BRK-PSM-13")})
    if not p.broker_retain_producer_state:
        disagree["BRK-PSM-15"] = "truncateHead before KAFKA-7190"
    return {v: w for v, w in disagree.items() if v not in inexpressible}, inexpressible


def test_the_derived_outcomes_match_the_listed_profiles() -> None:
    assert_derived_matches_listed(PROFILE_OUTCOMES, _derived)


def test_the_broker_vectors_outcome_is_pinned_per_profile() -> None:
    assert_pinned_per_profile(load_vectors(BROKER), PROFILE_OUTCOMES, _derived)


# --- the rules the vectors led to ------------------------------------------------------------------


def test_retriable_verification_errors_reach_the_producer_as_not_enough_replicas() -> None:
    """ReplicaManager.appendRecords (postVerificationCallback), testVerificationErrorConversions."""
    for e in (Errors.NOT_COORDINATOR, Errors.CONCURRENT_TRANSACTIONS, Errors.NETWORK_EXCEPTION,
              Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.COORDINATOR_NOT_AVAILABLE):
        assert produce_verification_error(int(e)) == Errors.NOT_ENOUGH_REPLICAS
    for e in (Errors.INVALID_TXN_STATE, Errors.INVALID_PRODUCER_EPOCH, Errors.TRANSACTION_ABORTABLE):
        assert produce_verification_error(int(e)) == e


def test_the_verification_manager_converts_the_coordinators_answers() -> None:
    """AddPartitionsToTxnManager: PRODUCER_FENCED -> INVALID_PRODUCER_EPOCH; TRANSACTION_ABORTABLE only
    for produce v11+; verified partitions are left out."""
    answers = {0: int(Errors.PRODUCER_FENCED), 1: int(Errors.NONE), 2: int(Errors.TRANSACTION_ABORTABLE)}
    assert verification_callback_errors(answers, generic_error=True) == {
        0: Errors.INVALID_PRODUCER_EPOCH, 2: Errors.TRANSACTION_ABORTABLE}
    assert verification_callback_errors(answers, generic_error=False) == {
        0: Errors.INVALID_PRODUCER_EPOCH, 2: Errors.INVALID_TXN_STATE}
    assert superseded_verification(0, 0) == (Errors.NETWORK_EXCEPTION, Errors.NONE)
    assert superseded_verification(0, 1) == (Errors.INVALID_PRODUCER_EPOCH, Errors.NONE)
    assert superseded_verification(1, 0) == (Errors.NONE, Errors.INVALID_PRODUCER_EPOCH)


def _txn_batch(seq: int, *, verified: bool, epoch: int = 1) -> leader_api.ProduceBatch:
    return leader_api.ProduceBatch(23, epoch, seq, seq + 1, AppendOrigin.CLIENT, True, verified=verified)


def test_a_transactional_batch_without_a_guard_is_refused_while_verification_is_on() -> None:
    """UnifiedLog.analyzeAndValidateProducerState (batchMissingRequiredVerification),
    testEnablingVerificationWhenRequestIsAtLogLayer; with verification off the same batch is written."""
    p = protocol("kafka-2024-10")
    on = leader_api.LeaderState((), 0, verification_enabled=True)
    res, after = leader_api.append_batch(on, _txn_batch(4, verified=False), p)
    assert (res.result, res.error) == (leader_api.REJECTED, Errors.INVALID_TXN_STATE) and after == on
    guarded = leader_api.start_verification(on, 23, 4, 1)
    res, after = leader_api.append_batch(guarded, _txn_batch(4, verified=True), p)
    assert res.result == leader_api.APPENDED and after.verifications == ()
    # the guard of the request must be the entry's: none there, none verified
    res, _ = leader_api.append_batch(on, _txn_batch(4, verified=True), p)
    assert res.error == Errors.INVALID_TXN_STATE
    res, _ = leader_api.append_batch(on._replace(verification_enabled=False), _txn_batch(4, verified=False), p)
    assert res.result == leader_api.APPENDED
    (report,) = harness.run_file(parse_vectors(_one("BRK-UL-11"), str(BROKER))).vectors
    assert report.outcome == harness.AGREE, report.differences


def test_the_epoch_check_comes_before_the_verification_sequence_check() -> None:
    """ProducerAppendInfo.maybeValidateDataBatch: checkProducerEpoch, then checkSequence (whose first
    test is the verification entry's lowest sequence): an old epoch is INVALID_PRODUCER_EPOCH even
    when its sequence is above the lowest one being verified."""
    p = protocol("kafka-2024-10")
    state = leader_api.LeaderState((), 0, verification_enabled=True)
    res, state = leader_api.append_batch(state, leader_api.ProduceBatch(23, 2, 0, 0, AppendOrigin.CLIENT, False), p)
    assert res.result == leader_api.APPENDED
    state = leader_api.start_verification(state, 23, 1, 2)
    res, _ = leader_api.append_batch(state, _txn_batch(5, verified=True, epoch=1), p)
    assert res.error == Errors.INVALID_PRODUCER_EPOCH
    res, _ = leader_api.append_batch(state, _txn_batch(5, verified=True, epoch=2), p)
    assert res.error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER  # the current epoch: the entry's bound


def test_a_failed_verification_keeps_the_entry_and_answers_the_converted_error() -> None:
    """testTransactionVerificationBlocksOutOfOrderSequence: the entry of the failed verification (lowest
    sequence 6) still refuses sequence 7 after a successful one."""
    p = protocol("kafka-2024-10")
    state = leader_api.LeaderState((), 0, verification_enabled=True)
    batch = leader_api.ProduceBatch(24, 0, 6, 6, AppendOrigin.CLIENT, True)
    started, state = leader_api.start_replica_append(state, batch, p, transactional_id=True)
    assert started.pending and started.result is None and state.verifications
    res, state = leader_api.complete_verified_append(state, batch, p, int(Errors.CONCURRENT_TRANSACTIONS))
    assert res.error == Errors.NOT_ENOUGH_REPLICAS and state.verifications
    later = batch._replace(base_sequence=7, last_sequence=7)
    started, state = leader_api.start_replica_append(state, later, p, transactional_id=True)
    res, state = leader_api.complete_verified_append(state, later, p, int(Errors.NONE))
    assert res.error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER and state.verifications
    # idempotent data, or no transactional id: no verification
    started, _ = leader_api.start_replica_append(state, batch._replace(transactional=False, base_sequence=0,
                                                                        last_sequence=0), p, transactional_id=True)
    assert not started.pending


def test_old_clients_get_coordinator_not_available_for_a_loading_group_coordinator() -> None:
    """KafkaApis.handleTxnOffsetCommitRequest: TxnOffsetCommit v0-1 (before KAFKA-7296)."""
    load = int(Errors.COORDINATOR_LOAD_IN_PROGRESS)
    assert [group_api.txn_offset_commit_answer(load, v) for v in range(5)] == [
        Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_NOT_AVAILABLE, load, load, load]
    assert group_api.txn_offset_commit_answer(int(Errors.NOT_COORDINATOR), 0) == Errors.NOT_COORDINATOR


def test_marker_answers_of_the_offsets_partition_are_retried_by_the_coordinator() -> None:
    """KafkaApis.handleWriteTxnMarkersRequest with the new group coordinator: its coordinator errors
    become NOT_LEADER_OR_FOLLOWER; the transaction coordinator retries that marker."""
    for e in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.NOT_COORDINATOR):
        assert group_api.marker_answer(int(e)) == Errors.NOT_LEADER_OR_FOLLOWER
    assert group_api.marker_answer(int(Errors.REQUEST_TIMED_OUT)) == Errors.REQUEST_TIMED_OUT
    from eoscheck.model.transactions.markers import RETRIABLE_MARKER_ERRORS
    assert Errors.NOT_LEADER_OR_FOLLOWER in RETRIABLE_MARKER_ERRORS


def test_the_first_unstable_offset_waits_for_the_high_watermark() -> None:
    """BRK-UL-05 asserts the first unstable offset after the COMMIT marker (still 0) and after the
    high watermark passes it (none); a wrong expectation is a disagreement, not unchecked."""
    data = _one("BRK-UL-05")
    assert _run_one(data).outcome == harness.AGREE
    data["vectors"][0]["steps"][2]["expected"]["first_unstable_offset"] = None
    wrong = _run_one(data)
    assert wrong.outcome == harness.DISAGREE
    assert [d.field for _, d in wrong.differences] == ["first_unstable_offset"]


def test_a_verification_callback_without_a_waiting_request_is_not_expressible() -> None:
    data = _one("BRK-RM-06")
    steps = data["vectors"][0]["steps"]
    data["vectors"][0]["steps"] = [steps[2]]
    report = _run_one(data)
    assert report.outcome == harness.NOT_EXPRESSIBLE and "no produce request is waiting" in report.reason


def test_a_completion_append_is_retried_or_left_to_the_next_coordinator() -> None:
    """TransactionMarkerChannelManager.tryAppendToLog: COORDINATOR_NOT_AVAILABLE retries the
    CompleteCommit append, NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS leave PrepareCommit, any
    other error is an IllegalStateException."""
    from eoscheck.model.api import coordinator as coordinator_api
    assert coordinator_api.completion_outcome(int(Errors.COORDINATOR_NOT_AVAILABLE)) == coordinator_api.COMPLETION_RETRY
    for e in (Errors.NOT_COORDINATOR, Errors.COORDINATOR_LOAD_IN_PROGRESS):
        assert coordinator_api.completion_outcome(int(e)) == coordinator_api.COMPLETION_SKIP
    try:
        coordinator_api.completion_outcome(int(Errors.MESSAGE_TOO_LARGE))
    except ValueError:
        pass
    else:
        raise AssertionError("an unexpected completion error must raise")
    for vid in ("BRK-TMC-02", "BRK-TMC-03"):
        assert _run_one(_one(vid)).outcome == harness.AGREE, vid
    data = _one("BRK-TMC-02")
    data["vectors"][0]["steps"][0]["expected"]["state_after"]["state"] = "CompleteCommit"
    assert _run_one(data).outcome == harness.DISAGREE


def test_kafka_eos_hands_the_producer_the_converted_verification_answer() -> None:
    """kafka.eos's HandleProduce: the coordinator's PRODUCER_FENCED reaches the producer as
    INVALID_PRODUCER_EPOCH (AddPartitionsToTxnManager), CONCURRENT_TRANSACTIONS as NOT_ENOUGH_REPLICAS
    (ReplicaManager); TRANSACTION_ABORTABLE is kept (produce v11+)."""
    from eoscheck.model.machines.eos_model import MODEL as EOS
    from eoscheck.model.state import TxnMetadata, TxnPartitionState
    from eoscheck.model.transactions.codes import NO_PENDING, TxnState

    m = EOS.machine("kafka-4.0")
    assert m.protocol.partition_verification  # type: ignore[attr-defined]
    leader = TxnPartitionState((), 0, ())
    ongoing = TxnMetadata(True, 7, -1, 3, -1, int(TxnState.ONGOING), False, NO_PENDING, (0,), -1, 2)
    check = m.produce_verification  # type: ignore[attr-defined]
    assert check(0, leader, ongoing, 7, 2) == Errors.INVALID_PRODUCER_EPOCH  # fenced: the coordinator is at 3
    assert check(0, leader, ongoing, 7, 3) == Errors.NONE
    preparing = ongoing._replace(state=int(TxnState.PREPARE_COMMIT))
    assert check(0, leader, preparing, 7, 3) == Errors.NOT_ENOUGH_REPLICAS
    assert check(1, leader, ongoing, 7, 3) == Errors.TRANSACTION_ABORTABLE  # partition 1 is not in the transaction
