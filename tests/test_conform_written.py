"""The vectors eoscheck's developers wrote from Kafka's unit tests at the sample's commit
(``tests/data/kafka-unit-test-vectors.written.json``, not Kafka's set): their totals are pinned so a
regression in a rule or in the harness fails here, and the rule fixes they led to are checked
directly."""

from __future__ import annotations

import json
from pathlib import Path

from eoscheck.model.api import coordinator as coordinator_api
from eoscheck.model.api import group as group_api
from eoscheck.model.api import leader as leader_api
from eoscheck.model.api.protocol import Protocol, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors
from eoscheck.model.coordinator.producer_ids import (
    MAX_PRODUCER_ID,
    ProducerIdBlocks,
    ProducerIdsExhausted,
    grant_block,
)
from eoscheck.model.errors import Errors
from eoscheck.model.group.txn_offset_commit import offset_commit_error_answer
from eoscheck.model.partition.verification import find_verification, start_verification
from eoscheck.model.producer.partition_sequences import PartitionEntry, acknowledge, assign, on_produce_error

WRITTEN = Path(__file__).parent / "data" / "kafka-unit-test-vectors.written.json"


def _run(data: dict | None = None) -> harness.RunReport:
    vf = load_vectors(WRITTEN) if data is None else parse_vectors(data, str(WRITTEN))
    return harness.run_file(vf)


def _one(vid: str) -> dict:
    data = json.loads(WRITTEN.read_text())
    data["vectors"] = [v for v in data["vectors"] if v["id"] == vid]
    assert data["vectors"], vid
    return data


def test_the_written_vectors_totals_are_pinned() -> None:
    run = _run()
    assert run.variant == "kafka-2024-10"
    totals = {k: sum(1 for v in run.vectors if v.outcome == k)
              for k in (harness.AGREE, harness.DISAGREE, harness.NOT_EXPRESSIBLE)}
    assert totals == {harness.AGREE: 129, harness.DISAGREE: 0, harness.NOT_EXPRESSIBLE: 1}
    assert {m: c[harness.AGREE] for m, c in run.counts().items()} == {
        "init_producer_id": 27, "txn_state_machine": 46, "transactional_id_expiration": 6,
        "produce_validation": 17, "producer_expiration": 4, "offset_fetch_require_stable": 9,
        "txn_offset_commit": 13, "producer_client": 7}
    inexpressible = {v.id: v.reason for v in run.vectors if v.outcome == harness.NOT_EXPRESSIBLE}
    # authorization errors are outside the model (README: "Out: ... authorization errors")
    assert set(inexpressible) == {"CLI-06"}
    assert "TOPIC_AUTHORIZATION_FAILED" in inexpressible["CLI-06"]


def test_the_header_says_who_wrote_the_vectors() -> None:
    data = json.loads(WRITTEN.read_text())
    assert "WRITTEN BY EOSCHECK'S DEVELOPERS" in data["schema"]["description"]
    assert data["source"]["commit"].startswith("1eb7644")
    assert data["counts"]["total"] == len(data["vectors"])


def test_end_txn_keeps_a_null_or_empty_transactional_id() -> None:
    (report,) = _run(_one("SM-30")).vectors
    assert report.outcome == harness.AGREE, report.differences


def test_the_timeout_abort_reports_the_record_it_tried_to_write() -> None:
    """SM-33: the PrepareAbort append fails; the attempted record is PrepareAbort at the fenced epoch
    while the metadata stays Ongoing with hasFailedEpochFence."""
    data = _one("SM-33")
    (report,) = _run(data).vectors
    assert report.outcome == harness.AGREE, report.differences
    data["vectors"][0]["steps"][0]["expected"]["txn_log_append"]["state"] = "Ongoing"
    (wrong,) = _run(data).vectors
    assert wrong.outcome == harness.DISAGREE


def test_first_seq_is_the_oldest_cached_batch() -> None:
    (report,) = _run(_one("PROD-03")).vectors
    assert report.outcome == harness.AGREE, report.differences


def test_has_offsets_counts_pending_commits() -> None:
    (report,) = _run(_one("TOC-14")).vectors
    assert report.outcome == harness.AGREE, report.differences


def test_offset_commit_errors_are_mapped_like_kafka() -> None:
    assert offset_commit_error_answer(Errors.NOT_ENOUGH_REPLICAS) == Errors.COORDINATOR_NOT_AVAILABLE
    assert offset_commit_error_answer(Errors.UNKNOWN_TOPIC_OR_PARTITION) == Errors.COORDINATOR_NOT_AVAILABLE
    assert offset_commit_error_answer(Errors.NOT_LEADER_OR_FOLLOWER) == Errors.NOT_COORDINATOR
    assert offset_commit_error_answer(Errors.KAFKA_STORAGE_ERROR) == Errors.NOT_COORDINATOR
    assert offset_commit_error_answer(13) == Errors.COORDINATOR_LOAD_IN_PROGRESS  # NETWORK_EXCEPTION
    assert offset_commit_error_answer(Errors.MESSAGE_TOO_LARGE) == 28  # INVALID_COMMIT_OFFSET_SIZE
    assert offset_commit_error_answer(Errors.INVALID_TXN_STATE) == Errors.INVALID_TXN_STATE
    assert offset_commit_error_answer(Errors.INVALID_PRODUCER_ID_MAPPING) == Errors.INVALID_PRODUCER_ID_MAPPING


def test_a_failed_txn_offset_commit_leaves_no_pending_offsets() -> None:
    state = group_api.GroupCoordinatorState(None, 1)
    req = group_api.TxnOffsetCommitRequest(1000, 0, -1, ((0, 5),))
    err, after = group_api.handle_txn_offset_commit(state, req, _protocol(), append_error=int(Errors.NOT_ENOUGH_REPLICAS))
    assert err == Errors.COORDINATOR_NOT_AVAILABLE
    assert after == state
    err, after = group_api.handle_txn_offset_commit(state, req, _protocol())
    assert err == Errors.NONE and after.group is not None and after.group.pending


def test_verification_entry_follows_the_epoch() -> None:
    """maybeUpdateLowestSequenceAndEpoch: same epoch keeps the lowest sequence, a higher epoch
    replaces the sequence, an older epoch is ignored."""
    entries = start_verification((), 1, 1, 0, 0)
    entries = start_verification(entries, 1, 0, 0, 0)
    assert find_verification(entries, 1).lowest_sequence == 0  # type: ignore[union-attr]
    entries = start_verification(entries, 1, 2, 1, 0)
    e = find_verification(entries, 1)
    assert e is not None and (e.lowest_sequence, e.epoch) == (2, 1)
    entries = start_verification(entries, 1, 0, 0, 0)
    e = find_verification(entries, 1)
    assert e is not None and (e.lowest_sequence, e.epoch) == (2, 1)


def _protocol() -> Protocol:
    return protocol("kafka-2024-10")


def test_a_duplicate_sequence_answer_completes_the_batch_without_an_offset() -> None:
    """Sender.completeBatch: DUPLICATE_SEQUENCE_NUMBER is a success (no epoch bump, no reset); the
    acknowledged sequence and offset never move back (SenderTest.testCorrectHandlingOfDuplicateSequenceError)."""
    e, _ = assign(PartitionEntry(1, 0), "r1", 1, 2**31 - 1)
    e, _ = assign(e, "r2", 1, 2**31 - 1)
    e = acknowledge(e, "r2", 1000, 2**31 - 1)
    r = on_produce_error(e, "r1", int(Errors.DUPLICATE_SEQUENCE_NUMBER), -1, transactional=False)
    assert r.completed and not r.bump_epoch and not r.retry and not r.abortable
    assert (r.entry.last_acked_sequence, r.entry.last_acked_offset, r.entry.in_flight) == (1, 1000, ())
    (report,) = _run(_one("CLI-12")).vectors
    assert report.outcome == harness.AGREE, report.differences


def test_transactional_data_and_markers_clear_the_verification_entry() -> None:
    """UnifiedLog.updateProducers clears the entry for a transactional batch or marker;
    maybeStartTransactionVerification answers the SENTINEL while a transaction is ongoing."""
    p = _protocol()
    state = leader_api.start_verification(leader_api.LeaderState((), 0, 0, ()), 23, 5, 1)
    assert state.verifications
    batch = leader_api.ProduceBatch(23, 1, 5, 6, 0, True)
    res, after = leader_api.append_batch(state, batch, p)
    assert res.result == leader_api.APPENDED and after.verifications == ()
    assert leader_api.start_verification(after, 23, 5, 1).verifications == ()
    _, direct = leader_api.append_batch(state, batch, p, check_duplicates=False)
    assert direct.verifications == state.verifications  # ProducerAppendInfo alone does not clear it
    marker = leader_api.MarkerRequest(23, 1, 1, 0)
    _, marked = leader_api.append_marker(state, marker, p)
    assert marked.verifications == ()
    for vid in ("PROD-22", "PROD-23"):
        (report,) = _run(_one(vid)).vectors
        assert report.outcome == harness.AGREE, (vid, report.differences)
        assert not any(s.unchecked for s in report.steps), vid


def test_no_committed_offset_leaves_the_partition_initializing() -> None:
    (report,) = _run(_one("OFS-09")).vectors
    assert report.outcome == harness.AGREE, report.differences


def test_fetch_all_lists_only_partitions_with_a_committed_offset() -> None:
    data = _one("OFS-11")
    (report,) = _run(data).vectors
    assert report.outcome == harness.AGREE, report.differences
    data["vectors"][0]["steps"][0]["expected"]["partitions_returned"].append("bar-1")
    (wrong,) = _run(data).vectors
    assert wrong.outcome == harness.DISAGREE


def test_old_clients_get_invalid_producer_epoch_instead_of_producer_fenced() -> None:
    """KAFKA-9911 in KafkaApis: InitProducerId below v4, EndTxn / AddPartitionsToTxn / AddOffsetsToTxn
    below v2; other errors and newer versions are untouched."""
    p = _protocol()
    fenced, epoch = int(Errors.PRODUCER_FENCED), int(Errors.INVALID_PRODUCER_EPOCH)
    for api, first in (("InitProducerId", 4), ("EndTxn", 2), ("AddPartitionsToTxn", 2), ("AddOffsetsToTxn", 2)):
        assert coordinator_api.down_convert_fenced(fenced, api, first - 1, p) == epoch
        assert coordinator_api.down_convert_fenced(fenced, api, first, p) == fenced
        assert coordinator_api.down_convert_fenced(int(Errors.CONCURRENT_TRANSACTIONS), api, 0, p) == Errors.CONCURRENT_TRANSACTIONS
    for vid in ("SM-38", "SM-39", "SM-40", "INIT-32"):
        (report,) = _run(_one(vid)).vectors
        assert report.outcome == harness.AGREE, (vid, report.differences)


def test_a_marker_answer_after_losing_the_transactional_id_drops_the_completion() -> None:
    """TransactionMarkerRequestCompletionHandler: NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS from
    the state lookup -> removeMarkersForTxn, whatever the partition answered; the metadata is untouched."""
    p = _protocol()
    (report,) = _run(_one("SM-46")).vectors
    assert report.outcome == harness.AGREE, report.differences
    for lookup in (coordinator_api.CoordinatorState(coordinator_api.NO_METADATA, 0, True, 0),
                   coordinator_api.CoordinatorState(coordinator_api.NO_METADATA, 0, False, int(Errors.NOT_COORDINATOR))):
        ans, after = coordinator_api.handle_marker_response(lookup, 0, int(Errors.NONE), p)
        assert ans.abandon and not ans.retry and not ans.completed and after == lookup


def test_an_input_field_the_harness_does_not_read_is_reported() -> None:
    """A field no handler reads (here a made-up one) is listed as unchecked, with its reason; fields
    with no model counterpart say why leaving them out cannot change the answer."""
    data = _one("SM-03")
    data["vectors"][0]["steps"][0]["input"]["fencing_hint"] = 7
    (report,) = _run(data).vectors
    assert report.outcome == harness.AGREE
    assert "does not read" in report.steps[0].unchecked["input.fencing_hint"]
    (toc,) = _run(_one("TOC-03")).vectors
    assert "one group" in toc.steps[0].unchecked["input.group_id"]
    assert "producer epoch" in toc.steps[0].unchecked["input.producer_epoch"]


def test_produce_offsets_that_disagree_with_the_sequences_are_not_expressible() -> None:
    data = _one("PROD-19")
    step = data["vectors"][0]["steps"][0]["input"]
    step["first_offset"], step["last_offset"] = 0, 4
    (report,) = _run(data).vectors
    assert report.outcome == harness.NOT_EXPRESSIBLE and "do not hold" in report.reason


def test_producer_ids_run_out_at_the_largest_long() -> None:
    """ZkProducerIdManager: no block may pass Long.MaxValue (ProducerIdManagerTest.testExceedProducerIdLimitZk)."""
    last_fitting = MAX_PRODUCER_ID - 1000 + 1
    assert grant_block(ProducerIdBlocks(last_fitting, ()), 0).blocks[0].end == MAX_PRODUCER_ID + 1
    try:
        grant_block(ProducerIdBlocks(last_fitting + 1, ()), 0)
    except ProducerIdsExhausted:
        pass
    else:
        raise AssertionError("a block past Long.MaxValue was granted")
    (report,) = _run(_one("PIDM-03")).vectors
    assert report.outcome == harness.AGREE, (report.reason, report.differences)


def test_unsupported_message_format_on_txn_offset_commit_is_fatal_with_its_own_exception() -> None:
    """TxnOffsetCommitHandler: UNSUPPORTED_FOR_MESSAGE_FORMAT -> fatalError(error.exception()), not the
    KafkaException of an unexpected answer."""
    from eoscheck.model.producer.txn_offsets_client import on_txn_offset_commit_error
    r = on_txn_offset_commit_error(int(Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT))
    assert (r.action, r.exception) == ("fatal", "UnsupportedForMessageFormatException")
    assert on_txn_offset_commit_error(int(Errors.INVALID_TXN_STATE)).exception == "KafkaException"
    (report,) = _run(_one("TOC-21")).vectors
    assert report.outcome == harness.AGREE, report.differences
