"""Session 14's vectors (``tests/data/kafka-unit-test-vectors.more.json``), written by eoscheck's
developers for the tests of the sample's files no earlier vector covered, and the harness steps and
rules they led to, checked directly."""

from __future__ import annotations

import json
from pathlib import Path

from conform_pins import Outcome, assert_derived_matches_listed, assert_pinned_per_profile, run_vector
from eoscheck.model.api import coordinator as coord
from eoscheck.model.api.protocol import protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.errors import Errors
from eoscheck.model.transactions.codes import NO_PENDING, TxnResult, TxnState
from eoscheck.model.transactions.metadata import TxnMeta

SNAPSHOT = protocol("kafka-2024-10")


def _meta(state: TxnState, epoch: int = 1, partitions: tuple[int, ...] = (), pending: int = NO_PENDING) -> TxnMeta:
    return TxnMeta(True, 10, 10, epoch, -1, int(state), False, pending, partitions)


def test_prepare_add_partitions_adds_to_the_transaction() -> None:
    one = coord.prepare_add_partitions(_meta(TxnState.EMPTY), (0,))
    assert not one.exception
    assert (one.metadata.state, one.metadata.partitions, one.metadata.epoch) == (TxnState.ONGOING, (0,), 1)
    two = coord.prepare_add_partitions(one.metadata, (1,))
    assert two.metadata.partitions == (0, 1) and two.metadata.producer_id == 10


def test_prepare_add_partitions_throws_where_ongoing_cannot_follow() -> None:
    for state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT, TxnState.DEAD):
        assert coord.prepare_add_partitions(_meta(state), (0,)).exception == "IllegalStateException", state
    pending = _meta(TxnState.ONGOING, pending=int(TxnState.PREPARE_COMMIT))
    assert coord.prepare_add_partitions(pending, (0,)).exception == "IllegalStateException"


def test_the_fence_abort_loses_to_a_newer_epoch() -> None:
    """shouldFailToAbortTransactionOnHandleInitPidWhenProducerEpochIsSmaller: the abort at the fenced epoch
    2 finds epoch 3 and is fenced itself; InitProducerId answers its error with no append."""
    seen = coord.CoordinatorState(_meta(TxnState.ONGOING, epoch=3, partitions=(0,)), 100)
    resp, st = coord.abort_after_fence(seen, 2, SNAPSHOT)
    assert resp.error == Errors.PRODUCER_FENCED and (resp.producer_id, resp.epoch) == (-1, -1)
    assert st == seen


def test_the_fence_abort_of_unchanged_metadata_prepares_the_abort() -> None:
    seen = coord.CoordinatorState(_meta(TxnState.ONGOING, epoch=1, partitions=(0,),
                                        pending=int(TxnState.PREPARE_EPOCH_FENCE)), 100)
    resp, st = coord.abort_after_fence(seen, 2, SNAPSHOT)
    assert resp.error == Errors.CONCURRENT_TRANSACTIONS
    assert (st.metadata.state, st.metadata.epoch, st.metadata.pending_state) == (TxnState.PREPARE_ABORT, 2, NO_PENDING)
    # the same abort from a client at a lower epoch than the metadata's is fenced too
    req = coord.EndTxnRequest("t", 10, 0, int(TxnResult.ABORT))
    assert coord.handle_end_txn(seen._replace(metadata=_meta(TxnState.ONGOING)), req, SNAPSHOT)[0].error == \
        Errors.PRODUCER_FENCED


def _init_vector(state: str, **extra: object) -> dict:
    return {"id": "X", "mechanism": "init_producer_id", "component": "c", "source": {"file": "f", "test": "t"},
            "initial_state": {"txn_metadata": {"exists": True, "producer_id": 10, "prev_producer_id": 10,
                                               "producer_epoch": 1, "last_producer_epoch": 0, "state": state,
                                               "partitions": ["topic1-0"]}},
            "steps": [{"input": {"api": "InitProducerId", "transactional_id": "known", "producer_id": -1,
                                 "producer_epoch": -1, "txn_timeout_ms": 1, **extra},
                       "expected": {"error": "PRODUCER_FENCED", "txn_log_append": None}}]}


def test_the_harness_reads_the_metadata_the_abort_finds() -> None:
    changed = {"metadata_at_abort": {"producer_epoch": 3}}
    assert run_vector(_init_vector("Ongoing", **changed)).outcome == harness.AGREE
    # without it the fence's abort finds its own metadata: CONCURRENT_TRANSACTIONS and a PrepareAbort append
    plain = run_vector(_init_vector("Ongoing"))
    assert plain.outcome == harness.DISAGREE
    assert {d.field for _, d in plain.differences} == {"error", "txn_log_append"}
    # the same epoch as the fence's: the abort goes ahead
    same = run_vector(_init_vector("Ongoing", metadata_at_abort={"producer_epoch": 2}))
    assert same.outcome == harness.DISAGREE and any(d.model == "CONCURRENT_TRANSACTIONS" for _, d in same.differences)
    # no fence to follow: the field cannot apply
    empty = run_vector(_init_vector("Empty", **changed))
    assert empty.outcome == harness.NOT_EXPRESSIBLE and "does not fence an ongoing transaction" in empty.reason


def _add_vector(state: str, expected: dict) -> dict:
    return {"id": "X", "mechanism": "txn_state_machine", "component": "c", "source": {"file": "f", "test": "t"},
            "initial_state": {"txn_metadata": {"exists": True, "producer_id": 5, "producer_epoch": 1, "state": state}},
            "steps": [{"input": {"api": "TransactionMetadata.prepareAddPartitions", "partitions": ["a-0"],
                                 "update_timestamp": 1}, "expected": expected}]}


ADDED = {"result": "TRANSITION", "after_complete": {"state": "Ongoing", "partitions": ["a-0"], "producer_epoch": 1}}
THROWN = {"error": "EXCEPTION", "exception": "IllegalStateException"}


def test_the_harness_runs_prepare_add_partitions() -> None:
    report = run_vector(_add_vector("Empty", ADDED))
    assert report.outcome == harness.AGREE, report
    # the update time is listed as not read, with the reason
    assert "update_timestamp" in str(report.steps[0].unchecked)
    assert run_vector(_add_vector("PrepareCommit", THROWN)).outcome == harness.AGREE
    assert run_vector(_add_vector("Empty", THROWN)).outcome == harness.DISAGREE


def test_txn_offset_commit_retries_any_retriable_error_from_3_8() -> None:
    """TxnOffsetCommitHandler: ``instanceof RetriableException`` from PR 15266 (3.8.0); 2.5-3.7 retried only the
    errors it named and answered any other with a fatal KafkaException."""
    from eoscheck.model.producer.txn_offsets_client import FATAL, RETRY, on_txn_offset_commit_error
    for err in (Errors.NETWORK_EXCEPTION, Errors.NOT_ENOUGH_REPLICAS, Errors.CONCURRENT_TRANSACTIONS):
        assert on_txn_offset_commit_error(int(err)).action == RETRY, err
        assert on_txn_offset_commit_error(int(err), any_retriable=False) == (FATAL, "KafkaException"), err
    for err in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.NOT_COORDINATOR,
                Errors.COORDINATOR_NOT_AVAILABLE, Errors.REQUEST_TIMED_OUT):
        assert on_txn_offset_commit_error(int(err), any_retriable=False).action == RETRY, err
        assert on_txn_offset_commit_error(int(err)).action == RETRY, err
    assert protocol("kafka-3.8-3.9").txn_offset_commit_any_retriable
    assert not protocol("kafka-3.7").txn_offset_commit_any_retriable
    assert SNAPSHOT.txn_offset_commit_any_retriable


def _produce_vector(mode: str | None) -> dict:
    extra = {} if mode is None else {"append_info": mode}
    batch = {"api": "ProduceBatch", "origin": "CLIENT", "producer_id": 1, "producer_epoch": 0, "is_transactional": True}
    return {"id": "X", "mechanism": "produce_validation", "component": "c", "source": {"file": "f", "test": "t"},
            "initial_state": {"producers": {}},
            "steps": [{"input": {**batch, "base_sequence": 0, "last_sequence": 0, "first_offset": 9,
                                 "is_transactional": False}, "expected": {"result": "APPENDED"}},
                      {"input": {**batch, "base_sequence": 1, "last_sequence": 5, "first_offset": 16, **extra},
                       "expected": {"state_after": {"1": {"first_seq": 1, "first_offset": 16, "last_seq": 5}}}},
                      {"input": {"api": "WriteTxnMarker", "producer_id": 1, "producer_epoch": 0, "result": "ABORT",
                                 "offset": 40, **({} if mode is None else {"append_info": "continue"})},
                       "expected": {"completed_txn": {"first_offset": 16, "last_offset": 40, "is_aborted": True},
                                    "state_after": {"1": {"first_seq": 1, "txn_first_offset": None}}}}]}


def test_a_shared_append_info_shows_its_own_first_batch() -> None:
    """ProducerAppendInfo.toEntry(): firstSeq / firstDataOffset of the batches of that append info; the
    marker's CompletedTxn spans the transaction's first offset to the marker."""
    assert run_vector(_produce_vector("new")).outcome == harness.AGREE
    plain = run_vector(_produce_vector(None))  # the manager's entry: the oldest cached batch (sequence 0, offset 9)
    assert plain.outcome == harness.DISAGREE
    assert {(s, d.field, d.model) for s, d in plain.differences} == {
        (2, "state_after.1.first_seq", 0), (2, "state_after.1.first_offset", 9), (3, "state_after.1.first_seq", 0)}
    bad = _produce_vector("new")
    bad["steps"][1]["input"]["append_info"] = "later"
    assert run_vector(bad).outcome == harness.NOT_EXPRESSIBLE


# --- the file's outcome, pinned per profile ----------------------------------------------------------

MORE = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more.json"
_TV2 = ("SM-63-tv2", "SM-64-tv2")
#: the KIP-360 producer client's steps and prepareIncrementProducerEpoch with an expected epoch (2.5+)
_KIP360 = ("INIT-40", "CLI-40", "CLI-41", "CLI-42", "CLI-43", "CLI-44")

#: profile -> ({vector: why it disagrees}, {vector: the feature it needs that the version lacks}); every
#: other vector of the file agrees. A disagreement here is a real behaviour of that version.
PROFILE_OUTCOMES: dict[str, Outcome] = {
    "kafka-2024-10": ({}, {}),
    "kafka-later-trunk": ({v: "a TV2 completion keeps lastProducerEpoch (the snapshot sets it to the epoch)"
                           for v in _TV2}, {}),
    "kafka-3.7": ({"TOC-31": "before PR 15266 (3.8.0) NETWORK_EXCEPTION on TxnOffsetCommit is fatal"},
                  {v: "transaction-version-2" for v in _TV2}),
    "kafka-2.0.1-2.3": ({"TOC-31": "before PR 15266 (3.8.0) NETWORK_EXCEPTION on TxnOffsetCommit is fatal",
                         "INIT-42": "before KIP-588 (2.7) the fenced abort answers INVALID_PRODUCER_EPOCH"},
                        {**{v: "transaction-version-2" for v in _TV2},
                         **{v: "kip-360" for v in _KIP360}}),
    "kafka-2.0.0": ({"TOC-31": "before PR 15266 (3.8.0) NETWORK_EXCEPTION on TxnOffsetCommit is fatal",
                     # 2.0.0 TxnOffsetCommitHandler does not name it: an unexpected, fatal error
                     "TOC-32": "before KAFKA-7296 (2.0.1) COORDINATOR_LOAD_IN_PROGRESS on TxnOffsetCommit is fatal",
                     "INIT-42": "before KIP-588 (2.7) the fenced abort answers INVALID_PRODUCER_EPOCH"},
                    {**{v: "transaction-version-2" for v in _TV2},
                     **{v: "kip-360" for v in _KIP360}}),
}


def _derived(name: str) -> Outcome:
    """The outcome a profile should give, from what its version lacks and does."""
    p = protocol(name)
    needs = {**{v: "transaction-version-2" for v in _TV2}, **{v: "kip-360" for v in _KIP360}}
    inexpressible = {v: f for v, f in needs.items() if f in p.lacks}
    disagree: dict[str, str] = {}
    if p.tv2_last_epoch == "keep" and "transaction-version-2" not in p.lacks:
        disagree.update({v: "TV2 completion keeps lastProducerEpoch" for v in _TV2})
    if not p.txn_offset_commit_any_retriable:
        disagree["TOC-31"] = "NETWORK_EXCEPTION fatal before 3.8"
    if p.txn_offset_commit_handler == "2.0.0":
        disagree["TOC-32"] = "COORDINATOR_LOAD_IN_PROGRESS fatal before KAFKA-7296 (2.0.1)"
    if not p.producer_fenced:
        disagree["INIT-42"] = "INVALID_PRODUCER_EPOCH before KIP-588"
    return disagree, inexpressible


def test_the_more_vectors_totals_are_pinned() -> None:
    run = harness.run_file(load_vectors(MORE))
    assert run.variant == "kafka-2024-10"
    assert len(run.vectors) == 30 and all(v.outcome == harness.AGREE for v in run.vectors)


def test_the_derived_outcomes_match_the_listed_profiles() -> None:
    assert_derived_matches_listed(PROFILE_OUTCOMES, _derived)


def test_the_more_vectors_outcome_is_pinned_per_profile() -> None:
    assert_pinned_per_profile(load_vectors(MORE), PROFILE_OUTCOMES, _derived)


def test_the_file_repeats_no_earlier_vector_or_test() -> None:
    data = json.loads(MORE.read_text())
    assert "WRITTEN BY EOSCHECK'S DEVELOPERS" in data["schema"]["description"]
    assert data["counts"]["total"] == len(data["vectors"])
    ids = [v["id"] for v in data["vectors"]]
    assert len(set(ids)) == len(ids)
    for other in ("sample", "written", "client", "broker"):
        earlier = json.loads((MORE.parent / f"kafka-unit-test-vectors.{other}.json").read_text())
        assert not set(ids) & {v["id"] for v in earlier["vectors"]}, other
        tests = {(v["source"]["file"], v["source"]["test"]) for v in earlier["vectors"]}
        assert not {(v["source"]["file"], v["source"]["test"]) for v in data["vectors"]} & tests, other


def test_all_states_lists_each_state_once() -> None:
    vector = {"id": "X", "mechanism": "txn_state_machine", "component": "c", "source": {"file": "f", "test": "t"},
              "initial_state": {}, "steps": [{"input": {"api": "TransactionState.AllStates"},
                                              "expected": {"states": ["Empty", "Ongoing"]}}]}
    assert run_vector(vector).outcome == harness.DISAGREE  # eight states, not two
    data = json.loads(MORE.read_text())
    (sm65,) = [v for v in data["vectors"] if v["id"] == "SM-65"]
    assert len(sm65["steps"][0]["expected"]["states"]) == 8


def test_an_acknowledged_batch_marked_unresolved_resolves_without_a_bump() -> None:
    """markSequenceUnresolved reads only the batch's last sequence (testBumpEpochAfterTimeoutWithout-
    PendingInflightRequests): with nothing in flight and the next sequence after the last acknowledged one,
    maybeResolveSequences clears it; a gap needs the idempotent producer's bump."""
    from eoscheck.model.api import client as client_api
    from eoscheck.model.producer.partition_sequences import BUMP, RESOLVED, PartitionEntry
    acked = PartitionEntry(15, 5, next_sequence=1, last_acked_sequence=0)
    marked = client_api.mark_unresolved_after(acked, 0, 2**31 - 1)
    assert marked.unresolved == 1
    assert client_api.maybe_resolve_sequences(marked, transactional=False, can_bump_epoch=True,
                                              max_seq=2**31 - 1) == (acked, RESOLVED)
    gap = client_api.mark_unresolved_after(acked._replace(next_sequence=2), 0, 2**31 - 1)
    assert client_api.maybe_resolve_sequences(gap, transactional=False, can_bump_epoch=True, max_seq=2**31 - 1)[1] == BUMP
    # the larger of two marks is kept
    assert client_api.mark_unresolved_after(marked, 4, 2**31 - 1).unresolved == 5
    assert client_api.mark_unresolved_after(client_api.mark_unresolved_after(acked, 4, 2**31 - 1), 0,
                                            2**31 - 1).unresolved == 5


def test_a_response_out_of_retries_fails_the_batch() -> None:
    def vector(text: str, expected: dict) -> dict:
        return {"id": "X", "mechanism": "producer_client", "component": "c", "source": {"file": "f", "test": "t"},
                "initial_state": {"producer": {"transactional": False, "producer_id": 7, "epoch": 0}},
                "steps": [{"input": {"event": "send tp0 r1"}, "expected": {}},
                          {"input": {"event": text, "error": "NOT_LEADER_OR_FOLLOWER"}, "expected": expected}]}
    assert run_vector(vector("response r1", {"can_retry": True, "first_in_flight_sequence": 0})).outcome == harness.AGREE
    assert run_vector(vector("response r1 (retries exhausted)",
                       {"can_retry": False, "first_in_flight_sequence": None, "partition_epoch": 0,
                        "stale_producer_id_and_epoch": False})).outcome == harness.AGREE
