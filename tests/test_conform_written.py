"""The vectors eoscheck's developers wrote from Kafka's unit tests at the sample's commit
(``tests/data/kafka-unit-test-vectors.written.json``, not Kafka's set): their totals are pinned so a
regression in a rule or in the harness fails here, and the rule fixes they led to are checked
directly."""

from __future__ import annotations

import json
from pathlib import Path

from eoscheck.model.api import group as group_api
from eoscheck.model.api.protocol import Protocol, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors
from eoscheck.model.errors import Errors
from eoscheck.model.group.txn_offset_commit import offset_commit_error_answer
from eoscheck.model.partition.verification import find_verification, start_verification

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
    assert totals == {harness.AGREE: 100, harness.DISAGREE: 0, harness.NOT_EXPRESSIBLE: 2}
    assert {m: c[harness.AGREE] for m, c in run.counts().items()} == {
        "init_producer_id": 25, "txn_state_machine": 36, "transactional_id_expiration": 6,
        "produce_validation": 15, "producer_expiration": 2, "offset_fetch_require_stable": 5,
        "txn_offset_commit": 8, "producer_client": 3}
    inexpressible = {v.id: v.reason for v in run.vectors if v.outcome == harness.NOT_EXPRESSIBLE}
    assert set(inexpressible) == {"CLI-06", "PIDM-03"}
    assert "TOPIC_AUTHORIZATION_FAILED" in inexpressible["CLI-06"]
    assert "zk_block" in inexpressible["PIDM-03"]


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
