"""The producer client's vectors (``tests/data/kafka-unit-test-vectors.client.json``, session 13),
written by eoscheck's developers from TransactionManagerTest and SenderTest at the sample's commit:
their outcome is pinned per conform profile, and the client rules they led to are checked directly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conform_pins import Outcome, assert_derived_matches_listed, assert_pinned_per_profile
from eoscheck.model.api import client as client_api
from eoscheck.model.api.protocol import PROFILES, protocol, with_eos
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors
from eoscheck.model.errors import RETRIABLE, Errors
from eoscheck.model.producer.partition_sequences import (
    BUMP,
    FATAL_PRODUCE_ERRORS,
    RESOLVED,
    PartitionEntry,
    acknowledge,
    assign,
    expire_batch,
    maybe_resolve_sequences,
    on_produce_error,
)
from eoscheck.model.producer.txn_responses import on_txn_response

CLIENT = Path(__file__).parent / "data" / "kafka-unit-test-vectors.client.json"
MAX_SEQ = 2**31 - 1


def _data() -> dict:
    return json.loads(CLIENT.read_text())


def _one(vid: str, data: dict | None = None) -> dict:
    data = _data() if data is None else data
    data["vectors"] = [v for v in data["vectors"] if v["id"] == vid]
    assert data["vectors"], vid
    return data


def _run(data: dict, variant: str | None = None) -> harness.RunReport:
    return harness.run_file(parse_vectors(data, str(CLIENT)), variant)


_ALL = [v["id"] for v in json.loads(CLIENT.read_text())["vectors"]]

#: profile -> ({vector: why it disagrees}, {vector: the feature the version lacks}); every other vector
#: agrees. A disagreement here is a real change of Kafka's client after the vectors' commit.
PROFILE_OUTCOMES: dict[str, Outcome] = {
    "kafka-2024-10": ({}, {}),
    "kafka-later-trunk": ({
        # KAFKA-18019 (PR 17822, 4.0): INVALID_PRODUCER_ID_MAPPING is fatal for the producer
        "CL-33": "AddPartitionsToTxn answered INVALID_PRODUCER_ID_MAPPING: fatal, no epoch bump",
        "CL-38": "AddOffsetsToTxn answered INVALID_PRODUCER_ID_MAPPING: fatal, no epoch bump",
    }, {}),
    # TRANSACTION_ABORTABLE (3.8+) vectors apply to 3.8 .. 3.9 only: the profile also stands for 2.7 .. 3.7
    "kafka-2.7-3.9": ({}, {}),
    # the interface's producer client is the KIP-360 client (2.5+); CL-45 reads TRANSACTION_ABORTABLE
    "kafka-2.0-2.4": ({}, {**{v: "kip-360" for v in _ALL if v != "CL-45"}, "CL-45": "transaction-abortable"}),
}


def test_the_client_vectors_totals_are_pinned() -> None:
    run = harness.run_file(load_vectors(CLIENT))
    assert run.variant == "kafka-2024-10"
    assert len(run.vectors) == 60 == _data()["counts"]["total"]
    assert {m: (c[harness.AGREE], c[harness.DISAGREE], c[harness.NOT_EXPRESSIBLE]) for m, c in run.counts().items()} == {
        "producer_client": (33, 0, 0), "txn_client_requests": (26, 0, 0), "txn_offset_commit": (1, 0, 0)}
    # every vector compares something: none passes on unchecked fields alone
    assert all(any(s.compared for s in v.steps) for v in run.vectors)


#: the vectors whose inputs read an error a version may lack
_TRANSACTION_ABORTABLE = ("CL-13", "CL-23", "CL-30", "CL-35", "CL-40", "CL-41", "CL-45")
_PRODUCER_FENCED = ("CL-21", "CL-27", "CL-36")


def _derived(name: str) -> Outcome:
    """The outcome a profile not listed above should give, from what it lacks: the first needed feature
    it lacks makes a vector inexpressible (KIP-360 for every client step); the 4.0+ client (the profile
    validating EndTxn by the request's version, whose kafka.eos variant has ``client_pid_mapping_fatal``) fails CL-33 /
    CL-38 (KAFKA-18019)."""
    p = protocol(name)
    inexpressible: dict[str, str] = {}
    for vid in _ALL:
        needs = ([] if vid == "CL-45" else ["kip-360"]) + (["kip-588"] if vid in _PRODUCER_FENCED else []) + \
            (["transaction-abortable"] if vid in _TRANSACTION_ABORTABLE else [])
        lacked = [f for f in needs if f in p.lacks]
        if lacked:
            inexpressible[vid] = lacked[0]
    disagree = {v: "KAFKA-18019" for v in ("CL-33", "CL-38") if p.eos.client_pid_mapping_fatal and v not in inexpressible}
    return disagree, inexpressible


def test_kafka_18019_is_kafka_eos_client_pid_mapping_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The interface's client reads KAFKA-18019 from the profile's kafka.eos switch set: off in kafka-later-trunk, the
    1eb7644 vectors CL-33 / CL-38 (an abortable INVALID_PRODUCER_ID_MAPPING) agree."""
    doc, later = PROFILES["kafka-later-trunk"]
    data = _data()
    data["vectors"] = [v for v in data["vectors"] if v["id"] in ("CL-33", "CL-38")]
    run = harness.run_file(parse_vectors(data), "kafka-later-trunk")
    assert {v.outcome for v in run.vectors} == {harness.DISAGREE}
    monkeypatch.setitem(PROFILES, "kafka-later-trunk", (doc, with_eos(later, client_pid_mapping_fatal=False)))
    run = harness.run_file(parse_vectors(data), "kafka-later-trunk")
    assert {v.outcome for v in run.vectors} == {harness.AGREE}


def test_the_derived_outcomes_match_the_listed_profiles() -> None:
    assert_derived_matches_listed(PROFILE_OUTCOMES, _derived)


def test_the_client_vectors_outcome_is_pinned_per_profile() -> None:
    assert_pinned_per_profile(load_vectors(CLIENT), PROFILE_OUTCOMES, _derived)


def test_the_file_does_not_repeat_kafkas_sample() -> None:
    sample = json.loads((CLIENT.parent / "kafka-unit-test-vectors.sample.json").read_text())
    written = json.loads((CLIENT.parent / "kafka-unit-test-vectors.written.json").read_text())
    taken = {v["source"].get("test") for d in (sample, written) for v in d["vectors"]}
    assert not {v["source"]["test"] for v in _data()["vectors"]} & taken
    assert _data()["source"]["commit"] == sample["source"]["commit"]


def test_a_changed_expectation_disagrees() -> None:
    """The agreements are not vacuous: the asserted field is compared."""
    for vid, step, field, wrong in (("CL-11", 1, "client_state", "READY"), ("CL-52", 7, "producer_epoch", 3),
                                    ("CL-23", 0, "client_state", "FATAL_ERROR"), ("CL-15", 9, "next_sequence_tp1", 2)):
        data = _one(vid)
        data["vectors"][0]["steps"][step]["expected"][field] = wrong
        (report,) = _run(data).vectors
        assert report.outcome == harness.DISAGREE, vid


def test_coordinator_answers_follow_the_handlers() -> None:
    """TransactionManager's handlers at 1eb7644: fenced -> fatal ProducerFencedException; TRANSACTION_ABORTABLE ->
    abortable; INVALID_TXN_STATE fatal; UNKNOWN_PRODUCER_ID / INVALID_PRODUCER_ID_MAPPING abortable with an epoch
    bump when the coordinator can bump (abortableErrorIfPossible), else fatal; an unexpected AddPartitionsToTxn
    error is abortable, any other unexpected answer fatal."""
    for api in ("InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn"):
        for fenced in (Errors.PRODUCER_FENCED, Errors.INVALID_PRODUCER_EPOCH):
            assert on_txn_response(api, int(fenced), can_bump_epoch=True) == ("fatal", "ProducerFencedException", False)
        assert on_txn_response(api, int(Errors.TRANSACTION_ABORTABLE), can_bump_epoch=True).action == "abortable"
        assert on_txn_response(api, int(Errors.NOT_COORDINATOR), can_bump_epoch=True).action == "lookup-retry"
        assert on_txn_response(api, int(Errors.CONCURRENT_TRANSACTIONS), can_bump_epoch=True).action == "retry"
    for api in ("AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn"):
        assert on_txn_response(api, int(Errors.INVALID_TXN_STATE), can_bump_epoch=True).action == "fatal"
        r = on_txn_response(api, int(Errors.INVALID_PRODUCER_ID_MAPPING), can_bump_epoch=True)
        assert (r.action, r.bump_epoch) == ("abortable", True)
        assert on_txn_response(api, int(Errors.UNKNOWN_PRODUCER_ID), can_bump_epoch=False).action == "fatal"
        assert on_txn_response(api, int(Errors.INVALID_PRODUCER_ID_MAPPING), can_bump_epoch=True,
                               pid_mapping_fatal=True).action == "fatal"
    assert on_txn_response("AddPartitionsToTxn", int(Errors.UNKNOWN_SERVER_ERROR), can_bump_epoch=True).action == "abortable"
    assert on_txn_response("EndTxn", int(Errors.UNKNOWN_SERVER_ERROR), can_bump_epoch=True).action == "fatal"
    assert on_txn_response("FindCoordinator", int(Errors.NOT_COORDINATOR), can_bump_epoch=True).action == "retry"


def test_produce_answer_fixes() -> None:
    """UnsupportedVersionException is fatal (maybeTransitionToErrorState); LEADER_NOT_AVAILABLE is retriable."""
    assert Errors.UNSUPPORTED_VERSION in FATAL_PRODUCE_ERRORS
    assert Errors.LEADER_NOT_AVAILABLE in RETRIABLE
    e, _ = assign(PartitionEntry(1, 0), "r1", 1, MAX_SEQ)
    assert on_produce_error(e, "r1", int(Errors.UNSUPPORTED_VERSION), -1, transactional=False).fatal
    # an OutOfOrderSequenceException asks the idempotent producer for a bump even when sequences are not adjusted
    r = on_produce_error(e, "r1", int(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), -1, transactional=False, can_retry=False,
                         adjust_sequences=False)
    assert r.bump_epoch
    assert not on_produce_error(e, "r1", int(Errors.REQUEST_TIMED_OUT), -1, transactional=False, can_retry=False,
                                adjust_sequences=False).bump_epoch
    # a producer already in a fatal error asks for nothing
    r = on_produce_error(e, "r1", int(Errors.REQUEST_TIMED_OUT), -1, transactional=False, can_retry=False,
                         producer_fatal=True)
    assert not r.bump_epoch and r.entry.in_flight == ()


def test_the_idempotent_bump_at_the_largest_epoch_drops_the_producer_id() -> None:
    assert client_api.next_idempotent_pair(15, 5, 32767) == (15, 6)
    assert client_api.next_idempotent_pair(15, 32767, 32767) == (-1, -1)


def test_a_partition_on_an_older_epoch_restarts_at_its_next_drain() -> None:
    e, _ = assign(PartitionEntry(1, 1), "r1", 1, MAX_SEQ)
    assert client_api.maybe_update_producer_id_and_epoch(e, 1, 2, MAX_SEQ) == e  # a batch still in flight
    done = acknowledge(e, "r1", 500, MAX_SEQ)
    after = client_api.maybe_update_producer_id_and_epoch(done, 1, 2, MAX_SEQ)
    assert (after.epoch, after.next_sequence, after.last_acked_sequence) == (2, 0, -1)
    assert client_api.maybe_update_producer_id_and_epoch(after, 1, 2, MAX_SEQ) == after


def test_unresolved_sequences() -> None:
    """Only a batch expired in retry leaves its sequence unresolved; the partition resolves once nothing is in
    flight: in order -> nothing; a hole -> the idempotent producer bumps (markSequenceUnresolved,
    maybeResolveSequences); an OUT_OF_ORDER answer bumps only right after the unresolved sequence."""
    e, _ = assign(PartitionEntry(1, 0), "r1", 1, MAX_SEQ)
    e, _ = assign(e, "r2", 1, MAX_SEQ)
    assert expire_batch(e, "r1", transactional=False, max_seq=MAX_SEQ).entry.unresolved == -1
    retried = on_produce_error(e, "r1", int(Errors.NOT_LEADER_OR_FOLLOWER), -1, transactional=False).entry
    expired = expire_batch(retried, "r1", transactional=False, max_seq=MAX_SEQ)
    assert expired.entry.unresolved == 1 and not expired.bump_epoch
    assert maybe_resolve_sequences(expired.entry, transactional=False, can_bump_epoch=True, max_seq=MAX_SEQ)[1] == "pending"
    r = on_produce_error(expired.entry, "r2", int(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), -1, transactional=False)
    assert r.retry and r.bump_epoch
    acked = acknowledge(expired.entry, "r2", 1, MAX_SEQ)
    assert maybe_resolve_sequences(acked, transactional=False, can_bump_epoch=True, max_seq=MAX_SEQ) == (
        acked._replace(unresolved=-1), RESOLVED)
    lost = expired.entry._replace(in_flight=())
    assert maybe_resolve_sequences(lost, transactional=False, can_bump_epoch=True, max_seq=MAX_SEQ)[1] == BUMP
    assert maybe_resolve_sequences(lost, transactional=True, can_bump_epoch=False, max_seq=MAX_SEQ)[1] == "fatal"


def test_a_late_answer_to_an_expired_batch_is_ignored() -> None:
    (report,) = _run(_one("CL-62")).vectors
    assert report.outcome == harness.AGREE, report.differences
    data = _one("CL-62")
    data["vectors"][0]["steps"][2]["expected"] = {"ignored": False}
    (wrong,) = _run(data).vectors
    assert wrong.outcome == harness.DISAGREE


@pytest.mark.parametrize("name", ["kafka-2.5", "kafka-2.7-2.8", "kafka-3.0-3.1.0", "kafka-3.3-3.5"])
def test_before_kafka_14884_cl_62s_late_answer_is_handled_and_still_agrees(name: str) -> None:
    """Before 3.6.0 the late INVALID_TXN_STATE runs handleFailedBatch (model/producer/late_failure.py): ABORTABLE_ERROR
    again (the expiry's state, the one CL-62 asserts) and the next sequence 1 -> 0, which CL-62 does not assert; so
    CL-62 agrees under every profile, for a different reason before and from 3.6.0."""
    (report,) = _run(_one("CL-62"), name).vectors
    assert report.outcome == harness.AGREE, (name, report.differences)
    data = _one("CL-62")
    data["vectors"][0]["steps"][2]["expected"] = {"ignored": False, "next_sequence_tp0": 0,
                                                  "last_error": "InvalidTxnStateException", "exception": None}
    (handled,) = _run(data, name).vectors
    assert handled.outcome == harness.AGREE, (name, handled.differences)
    (ignored,) = _run(data, "kafka-3.6").vectors
    assert ignored.outcome == harness.DISAGREE
