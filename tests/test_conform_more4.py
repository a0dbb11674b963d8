"""Session 19's vectors (``tests/data/kafka-unit-test-vectors.more4.json``): TransactionManagerTest's five
testRetry...AfterTimeout tests (KAFKA-13412), pinned per profile, and the rule they read, checked directly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conform_pins import assert_pinned, run_vector, vectors_by_id
from eoscheck.model.api.protocol import PROFILES, SWITCH_HISTORY, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.errors import Errors
from eoscheck.model.producer import txn_calls as tc
from eoscheck.model.producer import txn_offsets_client as toc

MORE4 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more4.json"
ISE = "IllegalStateException"
TABLE = "2.5"


def _timed_out_commit(kafka_13412: bool) -> tc.TxnClient:
    c = tc.TxnClient(tc.IN_TRANSACTION, added=frozenset({"tp0"}), started=True, kafka_13412=kafka_13412)
    r = tc.begin_commit(c, TABLE)
    assert r.exception == "" and r.client.pending_call == tc.PendingCall(tc.COMMITTING, "commitTransaction")
    assert tc.await_result(r.client).exception == "TimeoutException"
    return r.client


def test_kafka_13412_keeps_a_timed_out_call_until_it_is_awaited() -> None:
    c = _timed_out_commit(True)
    # another call while the commit is unanswered: the kept result's target differs
    assert tc.begin_abort(c, TABLE).exception == ISE
    # answered (READY), not awaited: every other call is refused, the retry gets the same result
    done = tc.complete_call(c._replace(state=tc.READY), acked=False)
    for call in (tc.begin_transaction, tc.begin_abort, tc.initialize_transactions):
        assert call(done, TABLE).exception == ISE
    assert tc.maybe_add_partition(done, "tp0").exception == ISE
    again = tc.begin_commit(done, TABLE)
    assert (again.exception, again.reused) == ("", True)
    acked = tc.await_result(again.client)
    assert acked.exception == "" and acked.client.pending_call is not None and acked.client.pending_call.acked
    began = tc.begin_transaction(acked.client, TABLE)
    assert (began.exception, began.client.state, began.client.pending_call) == ("", tc.IN_TRANSACTION, None)


def test_before_kafka_13412_a_retry_is_a_new_call_unless_in_its_target_state() -> None:
    c = _timed_out_commit(False)
    # COMMITTING -> ABORTING is invalid: KafkaException (3.1.0's test asserts it)
    assert tc.begin_abort(c, TABLE).exception == "KafkaException"
    # in its own target state the kept result is handed back (KAFKA-7763's pendingResult)
    assert tc.begin_commit(c, TABLE).reused
    # once READY, nothing is kept for the retry: READY -> COMMITTING is invalid, beginTransaction goes through
    done = tc.complete_call(c._replace(state=tc.READY), acked=False)
    assert tc.begin_commit(done, TABLE).exception == "KafkaException"
    assert tc.begin_transaction(done, TABLE).exception == ""
    # the wrapping of failIfNotReadyForSend and sendOffsetsToTransaction's KafkaException
    fenced = tc.TxnClient(tc.FATAL_ERROR, "ProducerFencedException", kafka_13412=False)
    assert tc.maybe_add_partition(fenced, "tp0").exception == "KafkaException"
    assert tc.maybe_add_partition(fenced._replace(kafka_13412=True), "tp0").exception == "ProducerFencedException"
    assert tc.send_offsets_to_transaction(tc.TxnClient(tc.READY, kafka_13412=False)).exception == "KafkaException"
    assert tc.send_offsets_to_transaction(tc.TxnClient(tc.READY)).exception == ISE


def test_a_fatal_error_fails_the_kept_result() -> None:
    c = _timed_out_commit(True)
    r = tc.to_fatal_error(c, TABLE, "ProducerFencedException")
    assert r.client.pending_call is not None and r.client.pending_call.completed
    # await throws the error the result failed with (TransactionalRequestResult.await, since session 25)
    awaited = tc.await_result(r.client)
    assert awaited.exception == "ProducerFencedException"
    assert awaited.client.pending_call is not None and awaited.client.pending_call.acked


def test_an_abort_without_error_fails_undrained_batches_by_version() -> None:
    aborting = tc.TxnClient(tc.ABORTING)
    assert tc.undrained_batch_error(aborting, protocol("kafka-2.7-2.8").client_abort_exception) == \
        "TransactionAbortedException"
    assert tc.undrained_batch_error(aborting, protocol("kafka-2.6").client_abort_exception) == "KafkaException"
    # an abortable error fails them with that error, in every version
    assert tc.undrained_batch_error(tc.TxnClient(tc.ABORTABLE_ERROR, "CommitFailedException"),
                                    "TransactionAbortedException") == "CommitFailedException"


def test_the_switch_follows_the_tags() -> None:
    assert SWITCH_HISTORY["client_retry_safe_calls"] == (((2, 0, 0), False), ((3, 1, 1), True))
    assert not protocol("kafka-3.0-3.1.0").client_retry_safe_calls
    assert protocol("kafka-3.1.1-3.2").client_retry_safe_calls
    assert protocol("kafka-3.0-3.2") == protocol("kafka-3.1.1-3.2")


def test_pending_offset_commits_complete_the_result_only_when_all_are_committed() -> None:
    pending = frozenset({"tp1", "tp2"})
    a = toc.on_txn_offset_commit_answer(pending, {"tp1": Errors.NONE, "tp2": Errors.COORDINATOR_LOAD_IN_PROGRESS})
    assert (a.pending, a.action) == (frozenset({"tp2"}), toc.RETRY)
    a = toc.on_txn_offset_commit_answer(a.pending, {"tp2": Errors.NONE})
    assert (a.pending, a.action) == (frozenset(), toc.DONE)
    # the first abortable or fatal error fails the result and clears what is pending
    a = toc.on_txn_offset_commit_answer(pending, {"tp1": Errors.UNKNOWN_MEMBER_ID, "tp2": Errors.NONE})
    assert (a.pending, a.action, a.exception) == (frozenset(), toc.ABORTABLE, "CommitFailedException")
    a = toc.on_txn_offset_commit_answer(pending, {"tp1": Errors.PRODUCER_FENCED})
    assert (a.action, a.exception) == (toc.FATAL, "ProducerFencedException")


def test_the_basic_transaction_with_a_failing_offset_commit() -> None:
    cli115 = json.loads(json.dumps(vectors_by_id(MORE4)["CLI-115"]))
    step = next(i for i, s in enumerate(cli115["steps"]) if s["input"].get("event") == "TxnOffsetCommitResponse")
    cli115["steps"][step]["input"]["errors"] = {"tp1": "COORDINATOR_LOAD_IN_PROGRESS"}
    cli115["steps"][step]["expected"] = {"has_pending_offset_commits": True, "offsets_result_completed": False,
                                         "retry": True}
    cli115["steps"][step + 1:] = [{"input": {"event": "TxnOffsetCommitResponse", "errors": {"tp1": "ILLEGAL_GENERATION"}},
                                   "expected": {"has_pending_offset_commits": False, "offsets_result_completed": True,
                                                "client_state": "ABORTABLE_ERROR",
                                                "last_error": "CommitFailedException"}},
                                  {"input": {"call": "transactionManager.beginCommit()"},
                                   "expected": {"exception": "KafkaException"}}]
    report = run_vector(cli115)
    assert report.outcome == harness.AGREE, report.differences
    # a TxnOffsetCommit answer with nothing pending is refused rather than read
    del cli115["steps"][step - 4:step]  # from the AddOffsetsToTxn answer to the group coordinator's lookup
    report = run_vector(cli115)
    assert report.outcome == harness.NOT_EXPRESSIBLE and "no offsets pending" in report.reason


_VECTORS = ("CLI-110", "CLI-111", "CLI-112", "CLI-113", "CLI-114")
#: the others: each reads a coordinator's answer through the KIP-360 client
_OTHERS = ("CLI-115", "CLI-116", "CLI-117", "CLI-118", "CLI-119", "CLI-120", "CLI-121", "CLI-122", "CLI-123")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    if "kip-360" in p.lacks:
        # each reads a coordinator's answer through the KIP-360 client's handlers
        return {}, {v: "kip-360" for v in (*_VECTORS, *_OTHERS)}
    disagree: dict[str, str] = {}
    if not p.client_retry_safe_calls:
        disagree.update({v: "KAFKA-13412 (3.1.1 / 3.2.0): no pendingTransition, KafkaException for an invalid call"
                         for v in _VECTORS})
    if p.client_abort_exception != "TransactionAbortedException":
        disagree["CLI-116"] = "KAFKA-10186 (2.7.0): an aborted undrained batch fails with a plain KafkaException"
    return disagree, {}


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more4_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE4), name, disagree, inexpressible)


def test_the_derived_pins() -> None:
    assert _derived("kafka-3.1.1-3.2") == ({}, {})
    assert set(_derived("kafka-3.0-3.1.0")[0]) == set(_VECTORS) == set(_derived("kafka-2.7-2.8")[0])
    assert set(_derived("kafka-2.5")[0]) == set(_derived("kafka-2.6")[0]) == {*_VECTORS, "CLI-116"}
    assert set(_derived("kafka-2.4.1")[1]) == {*_VECTORS, *_OTHERS}


def test_the_old_profile_disagrees_where_3_1_0_differs() -> None:
    run = harness.run_file(load_vectors(MORE4), "kafka-3.0-3.1.0")
    by_id = {v.id: v for v in run.vectors}
    # the cross retries: 3.1.0's own test asserts KafkaException where 3.2.0's asserts IllegalStateException
    for vid in ("CLI-113", "CLI-114"):
        assert [(d.field, d.expected, d.model) for _, d in by_id[vid].differences] == [
            ("exception", ISE, "KafkaException")]
    # the test's first result is still awaited (it completed); only the calls differ
    assert all(d.field != "result_acked" for _, d in by_id["CLI-110"].differences)


def test_the_file_repeats_no_earlier_vector_or_test() -> None:
    data = json.loads(MORE4.read_text())
    assert "WRITTEN BY EOSCHECK'S DEVELOPERS (session 17)" in data["schema"]["description"]
    assert data["counts"]["total"] == len(data["vectors"]) == 16
    ids = [v["id"] for v in data["vectors"]]
    mine = {(v["source"]["file"], v["source"]["test"]) for v in data["vectors"]}
    assert len(mine) == 16
    for other in ("sample", "written", "client", "broker", "more", "more2", "more3"):
        earlier = json.loads((MORE4.parent / f"kafka-unit-test-vectors.{other}.json").read_text())
        assert not set(ids) & {v["id"] for v in earlier["vectors"]}, other
        assert not mine & {(v["source"]["file"], v["source"]["test"]) for v in earlier["vectors"]}, other


def test_a_disconnect_looks_the_coordinator_up_again() -> None:
    from eoscheck.model.producer import txn_responses as tr
    for name in ("InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn"):
        assert tr.on_disconnect(name) == tr.TxnResponseReaction(tr.LOOKUP_RETRY, "")
    # FindCoordinator needs no coordinator: it is only retried
    assert tr.on_disconnect("FindCoordinator").action == tr.RETRY
    # the vector without its second lookup: the InitProducerId answer still completes the kept result
    cli118 = json.loads(json.dumps(vectors_by_id(MORE4)["CLI-118"]))
    cli118["steps"][2]["input"] = {"event": "InitProducerIdResponse", "error": "NONE", "producer_id": 13131,
                                   "producer_epoch": 1}
    report = run_vector(cli118)
    assert report.outcome == harness.DISAGREE
    assert {d.field for _, d in report.differences} >= {"retry", "lookup_coordinator", "result_completed"}


def test_a_loaded_prepared_transaction_gets_its_markers_again() -> None:
    from eoscheck.model.api import coordinator as coordinator_api
    from eoscheck.model.state import TxnMetadata
    from eoscheck.model.transactions.codes import TxnResult, TxnState
    prepared = TxnMetadata(True, 1, -1, 0, -1, int(TxnState.PREPARE_ABORT), False, partitions=(0, 1))
    loaded, partitions, result = coordinator_api.load_and_resume(prepared, 3)
    assert (partitions, result, loaded.state) == ((0, 1), int(TxnResult.ABORT), int(TxnState.PREPARE_ABORT))
    done = prepared._replace(state=int(TxnState.COMPLETE_COMMIT), partitions=())
    assert coordinator_api.load_and_resume(done, 3)[1:] == ((), -1)
    # the vector with a completed transaction: no markers, so it disagrees
    sm95 = json.loads(json.dumps(vectors_by_id(MORE4)["SM-95"]))
    sm95["initial_state"]["txn1"]["state"] = "CompleteCommit"
    sm95["initial_state"]["txn1"]["partitions"] = []
    assert run_vector(sm95).outcome == harness.DISAGREE
