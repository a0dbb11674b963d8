"""Session 14's vectors (``tests/data/kafka-unit-test-vectors.more.json``), written by eoscheck's
developers for the tests of the sample's files no earlier vector covered, and the harness steps and
rules they led to, checked directly."""

from __future__ import annotations

from eoscheck.model.api import coordinator as coord
from eoscheck.model.api.protocol import protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import parse_vectors
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


def _run(vector: dict, variant: str | None = None) -> harness.VectorReport:
    data = {"source": {"repository": "apache/kafka", "commit": "1eb7644349cb07139d6a3c1ad1986979647cac99"},
            "vectors": [vector]}
    (report,) = harness.run_file(parse_vectors(data, "inline"), variant).vectors
    return report


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
    assert _run(_init_vector("Ongoing", **changed)).outcome == harness.AGREE
    # without it the fence's abort finds its own metadata: CONCURRENT_TRANSACTIONS and a PrepareAbort append
    plain = _run(_init_vector("Ongoing"))
    assert plain.outcome == harness.DISAGREE
    assert {d.field for _, d in plain.differences} == {"error", "txn_log_append"}
    # the same epoch as the fence's: the abort goes ahead
    same = _run(_init_vector("Ongoing", metadata_at_abort={"producer_epoch": 2}))
    assert same.outcome == harness.DISAGREE and any(d.model == "CONCURRENT_TRANSACTIONS" for _, d in same.differences)
    # no fence to follow: the field cannot apply
    empty = _run(_init_vector("Empty", **changed))
    assert empty.outcome == harness.NOT_EXPRESSIBLE and "does not fence an ongoing transaction" in empty.reason


def _add_vector(state: str, expected: dict) -> dict:
    return {"id": "X", "mechanism": "txn_state_machine", "component": "c", "source": {"file": "f", "test": "t"},
            "initial_state": {"txn_metadata": {"exists": True, "producer_id": 5, "producer_epoch": 1, "state": state}},
            "steps": [{"input": {"api": "TransactionMetadata.prepareAddPartitions", "partitions": ["a-0"],
                                 "update_timestamp": 1}, "expected": expected}]}


ADDED = {"result": "TRANSITION", "after_complete": {"state": "Ongoing", "partitions": ["a-0"], "producer_epoch": 1}}
THROWN = {"error": "EXCEPTION", "exception": "IllegalStateException"}


def test_the_harness_runs_prepare_add_partitions() -> None:
    report = _run(_add_vector("Empty", ADDED))
    assert report.outcome == harness.AGREE, report
    # the update time is listed as not read, with the reason
    assert "update_timestamp" in str(report.steps[0].unchecked)
    assert _run(_add_vector("PrepareCommit", THROWN)).outcome == harness.AGREE
    assert _run(_add_vector("Empty", THROWN)).outcome == harness.DISAGREE


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
    assert _run(_produce_vector("new")).outcome == harness.AGREE
    plain = _run(_produce_vector(None))  # the manager's entry: the oldest cached batch (sequence 0, offset 9)
    assert plain.outcome == harness.DISAGREE
    assert {(s, d.field, d.model) for s, d in plain.differences} == {
        (2, "state_after.1.first_seq", 0), (2, "state_after.1.first_offset", 9), (3, "state_after.1.first_seq", 0)}
    bad = _produce_vector("new")
    bad["steps"][1]["input"]["append_info"] = "later"
    assert _run(bad).outcome == harness.NOT_EXPRESSIBLE
