"""The vectors eoscheck's developers wrote from Kafka's unit tests at the sample's commit
(``tests/data/kafka-unit-test-vectors.written.json``, not Kafka's set): their totals are pinned so a
regression in a rule or in the harness fails here, and the rule fixes they led to are checked
directly."""

from __future__ import annotations

import json
from pathlib import Path

from conform_pins import Outcome, assert_pinned, outcome_totals
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
    assert outcome_totals(run) == {harness.AGREE: 130, harness.DISAGREE: 0, harness.NOT_EXPRESSIBLE: 0}
    assert {m: c[harness.AGREE] for m, c in run.counts().items()} == {
        "init_producer_id": 27, "txn_state_machine": 46, "transactional_id_expiration": 6,
        "produce_validation": 17, "producer_expiration": 4, "offset_fetch_require_stable": 9,
        "txn_offset_commit": 13, "producer_client": 8}
    # CLI-06 (TOPIC_AUTHORIZATION_FAILED on produce) agrees since session 25 (conf25a: the authorization errors)


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


_TV2 = ("INIT-07c", "INIT-07e", "INIT-08a", "SM-24", "SM-02", "SM-03", "SM-04-tv2", "SM-05-tv2", "SM-07-tv2",
        "SM-08-tv2", "SM-10-tv2", "SM-11", "SM-13", "SM-14", "SM-34", "SM-41", "SM-42", "SM-43", "SM-44",
        "SM-44b", "SM-45", "SM-46")

_KIP360 = ("INIT-12", "INIT-15", "INIT-16", "INIT-18", "INIT-19", "INIT-24", "INIT-25", "INIT-32")
#: TOC-18, TOC-20: the group's fencing answers a transactional commit only from KIP-447's broker (fid16)
_KIP447 = ("TOC-02", "TOC-03", "TOC-08", "TOC-09", "TOC-11", "TOC-18", "TOC-20",
           # OffsetFetch with require_stable: OffsetFetch v7 came with KIP-447 (2.5.0)
           "OFS-02", "OFS-03", "OFS-05", "OFS-06", "OFS-07", "OFS-11")
_VERIFY = ("PROD-16", "PROD-17", "PROD-22", "PROD-23", "SM-23a", "SM-23b", "SM-23c", "SM-23d", "SM-27", "SM-29")


def _lacking(*groups: tuple[tuple[str, ...], str]) -> dict[str, str]:
    """{vector: feature}; a vector in several groups is reported with the first feature the harness finds,
    which is the earlier group here."""
    out: dict[str, str] = {}
    for vectors, feature in groups:
        for v in vectors:
            out.setdefault(v, feature)
    return out


# TOC-05 (testVerificationErrorsForTxnOffsetCommits) needs KAFKA-15449, 3.7.0
_OFFSETS_VERIFY = (("TOC-05",), "kafka-15449")
_NO_TV2 = _lacking((_TV2, "transaction-version-2"))
_NO_OFFSETS_VERIFY = _lacking((_TV2, "transaction-version-2"), _OFFSETS_VERIFY)
_NO_VERIFY = _lacking((_TV2, "transaction-version-2"), (_VERIFY, "kip-890-verification"), _OFFSETS_VERIFY)
_NO_KIP588 = _lacking((_TV2, "transaction-version-2"), (_VERIFY, "kip-890-verification"), _OFFSETS_VERIFY,
                      (("INIT-32", "SM-38", "SM-39", "SM-40"), "kip-588"))
# the interface's producer client is the KIP-360 client (2.5+): its steps do not apply before 2.5 (session 13)
_CLIENT = ("CLI-02", "CLI-05", "CLI-06", "CLI-08", "CLI-09", "CLI-11", "CLI-12")
_PRE_KIP360 = _lacking((_TV2, "transaction-version-2"), (_KIP360 + _CLIENT, "kip-360"), (_VERIFY, "kip-890-verification"),
                       (_KIP447, "kip-447"), _OFFSETS_VERIFY, (("SM-38", "SM-39", "SM-40"), "kip-588"))

# before KIP-588 (2.7.0, KAFKA-9911) Errors has no PRODUCER_FENCED: 2.5/2.6 fence with INVALID_PRODUCER_EPOCH
_FENCED_AS_EPOCH = {v: "the fence is INVALID_PRODUCER_EPOCH (no error 90 before 2.7.0)"
                    for v in ("INIT-12", "INIT-16", "INIT-18")}

# 2.7.0-3.5.2 TxnOffsetCommitHandler: INVALID_PRODUCER_EPOCH goes through isFatalException to error.exception(),
# InvalidProducerEpochException since KIP-588; KAFKA-14278 (ff77b3ad041, 3.6.0) raises ProducerFencedException
_IPE_EXCEPTION = {"TOC-23": "INVALID_PRODUCER_EPOCH on TxnOffsetCommit raises InvalidProducerEpochException (fatal)"}

#: profile -> ({vector: why it disagrees}, {vector: the feature it needs that the version lacks, or
#: 'out of scope'}); every other vector of the written file agrees. The reasons are read from Kafka's source
#: at the release tags (model/api/protocol.py's FEATURE_SINCE and SWITCH_HISTORY): a disagreement here is a
#: real behaviour of that version, not a model bug.
PROFILE_OUTCOMES: dict[str, Outcome] = {
    "kafka-later-trunk": ({
        # KAFKA-14563 (PR 17698, 4.0): EndTxn is split by the *request's* transaction version; a TV0/TV1
        # request goes to endTransactionWithTV1, which fences any epoch but the metadata's
        "SM-11": "a TV0 EndTxn at epoch 1 against TV2 metadata at epoch 2 is PRODUCER_FENCED",
        # the same PR's TV2 table: CompleteCommit + COMMIT at the current epoch is INVALID_TXN_STATE
        "SM-13": "CompleteCommit, COMMIT at the current epoch: INVALID_TXN_STATE, not PRODUCER_FENCED",
        # KAFKA-20090 (PR 21469, Feb 2026): prepareFenceProducerEpoch at Short.MaxValue logs and keeps it
        "INIT-28": "fencing at the largest epoch keeps the epoch instead of throwing IllegalStateException",
    }, {}),
    # the 4.x releases have KAFKA-14563 but not KAFKA-20090: 4.0.0 .. 4.1.1 TransactionMetadata.scala and 4.2.0-rc1's
    # Java class throw in prepareFenceProducerEpoch at Short.MaxValue, so INIT-28 agrees there
    **dict.fromkeys(("kafka-4.2", "kafka-4.1.1", "kafka-4.1.0", "kafka-4.0.1", "kafka-4.0.0"), ({
        "SM-11": "a TV0 EndTxn at epoch 1 against TV2 metadata at epoch 2 is PRODUCER_FENCED",
        "SM-13": "CompleteCommit, COMMIT at the current epoch: INVALID_TXN_STATE, not PRODUCER_FENCED",
    }, {})),
    "kafka-2024-10": ({}, {}),
    "kafka-3.8-3.9": ({}, _NO_TV2),
    "kafka-3.7": ({
        # KAFKA-16314 (2e8d69b78ca, first tag 3.8.0); 3.7.0 handleVerifyPartitionsInTransaction
        "SM-23d": "a verified partition outside the transaction is INVALID_TXN_STATE before 3.8.0",
        "SM-29": "a verified partition outside the transaction is INVALID_TXN_STATE before 3.8.0",
    }, _NO_TV2),
    "kafka-3.6": ({
        # KAFKA-16314 (2e8d69b78ca, first tag 3.8.0); 3.7.0 handleVerifyPartitionsInTransaction
        "SM-23d": "a verified partition outside the transaction is INVALID_TXN_STATE before 3.8.0",
        "SM-29": "a verified partition outside the transaction is INVALID_TXN_STATE before 3.8.0",
    }, _NO_OFFSETS_VERIFY),
    "kafka-3.3-3.5": (_IPE_EXCEPTION, _NO_VERIFY),
    "kafka-3.1.1-3.2": (_IPE_EXCEPTION, _NO_VERIFY),
    "kafka-3.0-3.1.0": (_IPE_EXCEPTION, _NO_VERIFY),
    "kafka-2.7-2.8": (_IPE_EXCEPTION, _NO_VERIFY),
    "kafka-2.6": (_FENCED_AS_EPOCH, _NO_KIP588),
    "kafka-2.5": ({
        **_FENCED_AS_EPOCH,
        # 2.5.1 endTransaction on a pending PrepareEpochFence: lastProducerEpoch = producerEpoch (the old
        # epoch), carried by the PrepareAbort transit; 2.6.0 sets NO_PRODUCER_EPOCH (fidelity audit C2)
        "INIT-09": "the fence-abort's PrepareAbort carries lastProducerEpoch = the epoch before the fence",
        "INIT-10": "the fence-abort's PrepareAbort carries lastProducerEpoch = the epoch before the fence",
        "SM-32": "the timeout abort's PrepareAbort carries lastProducerEpoch = the epoch before the fence",
    }, _NO_KIP588),
    "kafka-2.4.1": ({}, _PRE_KIP360),
    "kafka-2.4.0": ({}, _PRE_KIP360),
    "kafka-2.0.1": ({
        # KAFKA-7190 shipped in 2.4.0 (1a5971ebdc7); 2.0 .. 2.3 evicted a producer whose last batch left the log
        "EXP-06": "moving the log start offset past producer 1's only batch evicts it (2.0 .. 2.3)",
    }, _PRE_KIP360),
}
#: 2.0.0 differs from 2.0.1 only in TxnOffsetCommitHandler's COORDINATOR_LOAD_IN_PROGRESS (KAFKA-7296), which no
#: written vector answers
# KIP-211's split of kafka-2.0.1-2.3 (2.1.0; the old name is an alias of kafka-2.0.1): 2.1-2.3 differs in no written vector
PROFILE_OUTCOMES["kafka-2.0.0"] = PROFILE_OUTCOMES["kafka-2.1-2.3"] = PROFILE_OUTCOMES["kafka-2.0.1"]


def test_the_written_vectors_outcome_is_pinned_per_profile() -> None:
    from eoscheck.model.api.protocol import PROFILE_TABLE
    assert set(PROFILE_OUTCOMES) == set(PROFILE_TABLE)
    vf = load_vectors(WRITTEN)
    for name, (disagree, inexpressible) in PROFILE_OUTCOMES.items():
        assert_pinned(vf, name, disagree, inexpressible)


def test_a_vector_needing_what_a_profile_lacks_is_not_expressible_under_it() -> None:
    """The feature check reads the vector's state and inputs: the same TV2 vector runs under a
    profile with TV2 and is reported as not applying under one without it."""
    data = _one("SM-41")
    (under_tv2,) = harness.run_file(parse_vectors(data, "x"), "kafka-2024-10").vectors
    assert under_tv2.outcome == harness.AGREE
    (under_39,) = harness.run_file(parse_vectors(data, "x"), "kafka-2.7-3.9").vectors
    assert under_39.outcome == harness.NOT_EXPRESSIBLE
    assert "initial_state.txn_metadata.client_transaction_version 2" in under_39.reason
    data["vectors"][0]["initial_state"]["txn_metadata"]["client_transaction_version"] = 0
    assert harness.needed_features(parse_vectors(data, "x").vectors[0],
                                   data["vectors"][0]["initial_state"]) == []


def test_old_request_versions_do_not_need_kip_588() -> None:
    """SM-38's first step (EndTxn v1) is a 2.0 .. 2.4 request; its second (v2) is not."""
    vector = parse_vectors(_one("SM-38"), "x").vectors[0]
    assert harness.needed_features(vector, {}) == [("kip-588", "step 2: EndTxn v2")]


def test_before_kip_588_every_fence_is_invalid_producer_epoch() -> None:
    """2.0 .. 2.4 have no PRODUCER_FENCED (code 90 came with KIP-588 in 2.7): the coordinator fences
    with INVALID_PRODUCER_EPOCH at every request version (2.4.0's TransactionCoordinator)."""
    old, new = protocol("kafka-2.0-2.4"), protocol("kafka-2.7-3.9")
    fenced, epoch = int(Errors.PRODUCER_FENCED), int(Errors.INVALID_PRODUCER_EPOCH)
    assert not old.producer_fenced and new.producer_fenced
    for api, version in (("EndTxn", 0), ("EndTxn", 1), ("AddPartitionsToTxn", 1), ("InitProducerId", 2)):
        assert coordinator_api.down_convert_fenced(fenced, api, version, old) == epoch
    assert coordinator_api.down_convert_fenced(fenced, "EndTxn", 1, new) == epoch  # KAFKA-9911
    assert coordinator_api.down_convert_fenced(fenced, "EndTxn", 2, new) == fenced
    assert coordinator_api.down_convert_fenced(int(Errors.CONCURRENT_TRANSACTIONS), "EndTxn", 0, old) == \
        Errors.CONCURRENT_TRANSACTIONS
    # Kafka's sample SM-10-tv0 (KAFKA-9600's tests, 2.6+): a larger epoch is accepted before KAFKA-9600,
    # a smaller one is INVALID_PRODUCER_EPOCH; the 2024 snapshot fences both with PRODUCER_FENCED
    sample = load_vectors(WRITTEN.parent / "kafka-unit-test-vectors.sample.json")
    sample = sample._replace(vectors=tuple(v for v in sample.vectors if v.id == "SM-10-tv0"))
    (at_2024,) = harness.run_file(sample).vectors
    (at_24,) = harness.run_file(sample, "kafka-2.0-2.4").vectors
    assert at_2024.outcome == harness.AGREE
    assert at_24.outcome == harness.DISAGREE
    assert {(i, d.field): d.model for i, d in at_24.differences if d.field == "error"} == {
        (1, "error"): "NONE", (2, "error"): "INVALID_PRODUCER_EPOCH"}


def test_before_kafka_9600_a_client_end_txn_is_refused_only_below_the_epoch() -> None:
    """2.4.0's endTransaction fences ``producerEpoch < txnMetadata.producerEpoch`` only; KAFKA-9600
    (2.6) made a client's EndTxn need the exact epoch."""
    from eoscheck.model.state import TxnMetadata
    from eoscheck.model.transactions.codes import TxnResult, TxnState
    meta = TxnMetadata(True, 10, 10, 3, -1, int(TxnState.ONGOING), False)
    st = coordinator_api.CoordinatorState(meta, 20)
    for epoch, old_answer, new_answer in ((4, Errors.NONE, Errors.PRODUCER_FENCED),
                                          (2, Errors.INVALID_PRODUCER_EPOCH, Errors.PRODUCER_FENCED),
                                          (3, Errors.NONE, Errors.NONE)):
        req = coordinator_api.EndTxnRequest("t", 10, epoch, int(TxnResult.COMMIT), version=1)
        old, after = coordinator_api.handle_end_txn(st, req, protocol("kafka-2.0-2.4"))
        req2 = req._replace(version=2)
        new, _ = coordinator_api.handle_end_txn(st, req2, protocol("kafka-2.7-3.9"))
        assert (old.error, new.error) == (old_answer, new_answer), epoch
        if old.error == Errors.NONE:
            assert after.metadata.state == TxnState.PREPARE_COMMIT and after.metadata.epoch == 3


SAMPLE = WRITTEN.parent / "kafka-unit-test-vectors.sample.json"

_SAMPLE_TV2 = {"INIT-08b", "SM-01", "SM-06-tv2", "SM-09-tv2", "SM-12", "SM-15", "SM-18"}
_SAMPLE_VERIFY = {"EXP-04", "PROD-15"}
_SAMPLE_PRE_KIP360 = _SAMPLE_TV2 | _SAMPLE_VERIFY | {"INIT-04", "INIT-14", "INIT-17", "INIT-20", "INIT-26", "INIT-29",
                                                     "TOC-01", "TOC-04", "TOC-07", "TOC-10",
                                                     # FENCED_INSTANCE_ID: KIP-447's broker only (fid16)
                                                     "TOC-19",
                                                     # the interface's client is the KIP-360 client (2.5+)
                                                     "CLI-04", "CLI-07", "CLI-10",
                                                     # OffsetFetch's require_stable: KIP-447 (2.5.0)
                                                     "OFS-01", "OFS-04"}

#: Kafka's sample per profile: (disagree, not expressible); the rest agrees
SAMPLE_OUTCOMES: dict[str, tuple[set[str], set[str]]] = {
    # KAFKA-14563 (4.0): a TV2 EndTxn after a client upgrade is validated by the request's version
    "kafka-later-trunk": ({"SM-12"}, set()),
    **dict.fromkeys(("kafka-4.2", "kafka-4.1.1", "kafka-4.1.0", "kafka-4.0.1", "kafka-4.0.0"), ({"SM-12"}, set())),
    "kafka-2024-10": (set(), set()),
    "kafka-3.8-3.9": (set(), _SAMPLE_TV2),
    "kafka-3.7": (set(), _SAMPLE_TV2),
    "kafka-3.6": (set(), _SAMPLE_TV2),
    "kafka-3.3-3.5": (set(), _SAMPLE_TV2 | _SAMPLE_VERIFY),
    "kafka-3.1.1-3.2": (set(), _SAMPLE_TV2 | _SAMPLE_VERIFY),
    "kafka-3.0-3.1.0": (set(), _SAMPLE_TV2 | _SAMPLE_VERIFY),
    "kafka-2.7-2.8": (set(), _SAMPLE_TV2 | _SAMPLE_VERIFY),
    # INIT-14, SM-10-tv0: PRODUCER_FENCED does not exist before 2.7.0 (the fence is INVALID_PRODUCER_EPOCH)
    "kafka-2.6": ({"INIT-14", "SM-10-tv0"}, _SAMPLE_TV2 | _SAMPLE_VERIFY),
    # INIT-11: before KAFKA-9666 (2.6.0) a second fence after a failed one bumps the epoch again
    "kafka-2.5": ({"INIT-11", "INIT-14", "SM-10-tv0"}, _SAMPLE_TV2 | _SAMPLE_VERIFY),
    # EXP-01: an expired producer's next batch (sequence 1) is UNKNOWN_PRODUCER_ID before KIP-360's broker
    # side (2.5; 2.4.1's ProducerStateManager.checkSequence); SM-10-tv0: before KAFKA-9600 / KIP-588
    "kafka-2.4.1": ({"EXP-01", "INIT-11", "SM-10-tv0"}, _SAMPLE_PRE_KIP360),
    "kafka-2.4.0": ({"EXP-01", "INIT-11", "SM-10-tv0"}, _SAMPLE_PRE_KIP360),
    "kafka-2.0.0": ({"EXP-01", "INIT-11", "SM-10-tv0"}, _SAMPLE_PRE_KIP360),
    "kafka-2.0.1": ({"EXP-01", "INIT-11", "SM-10-tv0"}, _SAMPLE_PRE_KIP360),
    "kafka-2.1-2.3": ({"EXP-01", "INIT-11", "SM-10-tv0"}, _SAMPLE_PRE_KIP360),
}


def test_the_sample_outcome_is_pinned_per_profile() -> None:
    from eoscheck.model.api.protocol import PROFILE_TABLE
    assert set(SAMPLE_OUTCOMES) == set(PROFILE_TABLE)
    vf = load_vectors(SAMPLE)
    for name, (disagree, inexpressible) in SAMPLE_OUTCOMES.items():
        run = harness.run_file(vf, name)
        assert {v.id for v in run.vectors if v.outcome == harness.DISAGREE} == disagree, name
        assert {v.id for v in run.vectors if v.outcome == harness.NOT_EXPRESSIBLE} == inexpressible, name


def test_a_field_the_version_does_not_have_is_left_unchecked() -> None:
    """Kafka's INIT-07a asserts previousProducerId and lastProducerEpoch, which TransactionMetadata got
    with KIP-360 (2.5): under kafka-2.0-2.4 they are unchecked with that reason, not disagreements."""
    vf = load_vectors(SAMPLE)
    vf = vf._replace(vectors=tuple(v for v in vf.vectors if v.id == "INIT-07a"))
    (old,) = harness.run_file(vf, "kafka-2.0-2.4").vectors
    assert old.outcome == harness.AGREE
    assert "KIP-360" in old.steps[0].unchecked["state_after.prev_producer_id"]
    (new,) = harness.run_file(vf, "kafka-2.7-3.9").vectors
    assert new.outcome == harness.AGREE and "state_after.prev_producer_id" not in new.steps[0].unchecked
