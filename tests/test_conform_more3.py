"""Session 16's vectors (``tests/data/kafka-unit-test-vectors.more3.json``), written by eoscheck's
developers for TransactionManagerTest's, KafkaApisTest's, UnifiedLogTest's and TransactionStateManagerTest's
tests that no earlier vector covered, and the rules and harness steps they led to, checked directly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conform_pins import assert_pinned, run_vector, vectors_by_id
from eoscheck.model.api import kafka_apis
from eoscheck.model.api.protocol import PROFILES, SWITCH_HISTORY, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.errors import Errors
from eoscheck.model.producer import txn_calls as tc

MORE3 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more3.json"
ISE = "IllegalStateException"


# --- rules ---------------------------------------------------------------------------------------------

def test_the_client_transition_tables_per_version() -> None:
    # the same in every version: a second initTransactions, an abort before initTransactions
    for table in tc.TRANSITIONS:
        assert not tc.transition_valid(tc.READY, tc.INITIALIZING, table)
        assert not tc.transition_valid(tc.UNINITIALIZED, tc.ABORTING, table)
        assert not tc.transition_valid(tc.READY, tc.ABORTABLE_ERROR, table)
        assert all(tc.transition_valid(s, tc.FATAL_ERROR, table) for s in tc.STATES)
    # KIP-360 (2.5): the epoch bump re-initializes from ABORTING_TRANSACTION
    assert not tc.transition_valid(tc.ABORTING, tc.INITIALIZING, "2.0")
    assert tc.transition_valid(tc.ABORTING, tc.INITIALIZING, "2.5")
    # 2.0-2.4 have no UNINITIALIZED case: any state reaches it; 2.5 only from READY; 3.6 also ABORTABLE_ERROR
    assert tc.transition_valid(tc.IN_TRANSACTION, tc.UNINITIALIZED, "2.0")
    assert not tc.transition_valid(tc.ABORTABLE_ERROR, tc.UNINITIALIZED, "2.5")
    assert tc.transition_valid(tc.ABORTABLE_ERROR, tc.UNINITIALIZED, "3.6")
    # KAFKA-13668 (3.6): INITIALIZING may fail abortably
    assert not tc.transition_valid(tc.INITIALIZING, tc.ABORTABLE_ERROR, "2.5")
    assert tc.transition_valid(tc.INITIALIZING, tc.ABORTABLE_ERROR, "3.6")
    # the profiles carry the table of their versions
    assert SWITCH_HISTORY["client_transitions"][2:4] == (((3, 6, 0), "3.6"), ((4, 0, 0), "4.0"))
    assert protocol("kafka-3.6").client_transitions == "3.6"
    assert protocol("kafka-3.3-3.5").client_transitions == "2.5"
    assert protocol("kafka-2.4.1").client_transitions == "2.0"


def test_an_invalid_transition_poisons_only_on_the_senders_thread() -> None:
    ready = tc.TxnClient(tc.READY)
    fg = tc.to_abortable_error(ready, "3.6")
    assert (fg.exception, fg.client.state) == (ISE, tc.READY)
    bg = tc.to_abortable_error(ready._replace(background=True), "3.6")
    assert (bg.exception, bg.client.state, bg.client.last_error) == (ISE, tc.FATAL_ERROR, ISE)
    # every later call rethrows the IllegalStateException, beginAbort included
    for call in (tc.begin_transaction, tc.begin_abort, tc.begin_commit, tc.initialize_transactions):
        assert call(bg.client, "3.6").exception == ISE
    assert tc.maybe_add_partition(bg.client, "tp0").exception == ISE
    # an ordinary fatal error is wrapped
    fatal = tc.to_fatal_error(ready, "3.6").client
    assert tc.maybe_add_partition(fatal, "tp0").exception == "KafkaException"
    assert tc.fail_with_error(fatal._replace(last_error="ProducerFencedException")) == "ProducerFencedException"
    # an abort in progress is left alone by an abortable error
    aborting = tc.TxnClient(tc.ABORTING)
    assert tc.to_abortable_error(aborting, "3.6") == tc.CallResult(aborting)


def test_begin_abort_is_what_an_abortable_error_is_for() -> None:
    abortable = tc.TxnClient(tc.ABORTABLE_ERROR, "KafkaException", new=frozenset({"tp0"}))
    r = tc.begin_abort(abortable, "3.6")
    assert (r.exception, r.client.state, r.client.new) == ("", tc.ABORTING, frozenset())
    assert tc.begin_commit(abortable, "3.6").exception == "KafkaException"
    assert tc.begin_abort(tc.TxnClient(tc.UNINITIALIZED, has_producer_id=False), "3.6").exception == ISE
    assert tc.begin_transaction(tc.TxnClient(tc.READY, transactional=False), "3.6").exception == ISE


def test_a_partitions_way_into_the_transaction() -> None:
    c = tc.TxnClient(tc.IN_TRANSACTION)
    assert not tc.is_send_to_partition_allowed(c, "tp0")
    c = tc.maybe_add_partition(c, "tp0").client
    assert tc.is_partition_pending_add(c, "tp0") and tc.has_partitions_to_add(c)
    assert tc.maybe_add_partition(c, "tp0").client == c  # already on its way
    c = tc.send_add_partitions(c)
    assert (c.new, c.pending) == (frozenset(), frozenset({"tp0"}))
    assert not tc.is_send_to_partition_allowed(c, "tp0")
    c = tc.partitions_added(c)
    assert tc.is_partition_added(c, "tp0") and not tc.has_partitions_to_add(c)
    assert tc.is_send_to_partition_allowed(c, "tp0") and tc.may_drain(c, "tp0")
    assert tc.is_send_to_partition_allowed(tc.to_abortable_error(c, "3.6").client, "tp0")
    assert not tc.is_send_to_partition_allowed(tc.to_fatal_error(c, "3.6").client, "tp0")
    # an idempotent producer sends anywhere, unless fatally failed; it may not drain without a producer id
    idem = tc.TxnClient(tc.UNINITIALIZED, transactional=False, has_producer_id=False)
    assert tc.maybe_add_partition(idem, "tp0") == tc.CallResult(idem)
    assert tc.is_send_to_partition_allowed(idem, "tp0") and not tc.may_drain(idem, "tp0")
    # no producer id, or no transaction open
    assert tc.maybe_add_partition(tc.TxnClient(tc.UNINITIALIZED, has_producer_id=False), "tp0").exception == ISE
    assert tc.maybe_add_partition(tc.TxnClient(tc.READY), "tp0").exception == ISE


def test_the_end_txn_waits_and_is_skipped_when_nothing_was_added() -> None:
    committing = tc.TxnClient(tc.COMMITTING, started=True)
    assert tc.next_request_to_end(committing, "3.6", True) == tc.NextRequest(committing, "")
    assert tc.next_request_to_end(committing, "3.6", False).request == "EndTxn"
    # nothing added: completed without sending, READY (INITIALIZING when an epoch bump is pending)
    aborting = tc.TxnClient(tc.ABORTING, added=frozenset({"tp9"}))
    r = tc.next_request_to_end(aborting, "3.6", False)
    assert (r.request, r.end_txn_skipped, r.client.state, r.client.added) == ("", True, tc.READY, frozenset())
    assert tc.complete_transaction(aborting, "3.6", epoch_bump_required=True).client.state == tc.INITIALIZING
    # partitions not yet sent go first
    r = tc.next_request_to_end(committing._replace(new=frozenset({"tp0"})), "3.6", False)
    assert (r.request, r.client.pending) == ("AddPartitionsToTxn", frozenset({"tp0"}))


def test_put_transaction_state_keeps_what_is_cached() -> None:
    sm82 = _copy("SM-82")
    # a second put for 'one' returns the metadata already cached, not the one given
    again = {"input": {"call": "putTransactionStateIfNotExists",
                       "txn_metadata": {**sm82["steps"][1]["input"]["txn_metadata"], "producer_id": 99}},
             "expected": {"state_after": {"producer_id": 1}}}
    sm82["steps"].append(again)
    assert run_vector(sm82).outcome == harness.AGREE
    again["expected"] = {"state_after": {"producer_id": 99}}
    assert run_vector(sm82).outcome == harness.DISAGREE
    # while the partition loads, neither call reaches the cache
    loading = _copy("SM-82")
    loading["initial_state"]["coordinator"]["loading"] = True
    report = run_vector(loading)
    assert report.outcome == harness.DISAGREE
    assert {d.model for _, d in report.differences if d.field == "error"} == {"COORDINATOR_LOAD_IN_PROGRESS"}


def test_kafka_apis_checks() -> None:
    known = kafka_apis.known_in({"topic": 1})
    assert known("topic-0") and not known("topic-1") and not known("topic--1") and not known("other-0")
    assert kafka_apis.add_partitions_errors(["topic-0"], known) is None
    assert kafka_apis.add_partitions_errors(["topic-0", "topic-1"], known) == {
        "topic-0": Errors.OPERATION_NOT_ATTEMPTED, "topic-1": Errors.UNKNOWN_TOPIC_OR_PARTITION}
    assert kafka_apis.txn_offset_commit_split(["topic-0", "topic-1"], known) == (
        {"topic-1": Errors.UNKNOWN_TOPIC_OR_PARTITION}, ["topic-0"])
    assert kafka_apis.marker_errors(["a-0", "b-0", "c-0"], {"b-0": 1, "c-0": 2}) == (
        {"a-0": Errors.UNKNOWN_TOPIC_OR_PARTITION, "b-0": Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT}, ["c-0"])


# --- harness steps -------------------------------------------------------------------------------------

def _copy(vid: str) -> dict:
    return json.loads(json.dumps(vectors_by_id(MORE3)[vid]))


def test_a_known_partition_reaches_the_coordinator() -> None:
    refused = run_vector(_copy("SM-80"))
    assert refused.outcome == harness.AGREE
    assert refused.steps[0].unchecked["input.producer_id"].startswith("KafkaApis' metadata check answered")
    sm80 = _copy("SM-80")
    sm80["initial_state"]["metadata_cache"] = {"topic": 2}  # topic-1 now exists
    report = run_vector(sm80)
    assert report.outcome == harness.DISAGREE and {s for s, _ in report.differences} == {2}
    toc = _copy("TOC-50")
    toc["steps"][1]["expected"]["coordinator_called"] = False
    assert run_vector(toc).outcome == harness.AGREE
    toc["initial_state"]["metadata_cache"] = {"topic": 2}
    toc["initial_state"]["group"] = {"committed": {}}
    assert run_vector(toc).outcome == harness.DISAGREE


def test_a_hosted_format_v2_partition_gets_its_marker() -> None:
    prod = _copy("PROD-81")
    prod["initial_state"]["replica_magic"] = {"t-0": 2}
    prod["initial_state"]["producers"] = {}
    prod["steps"][0]["expected"] = {"per_partition": {"t-0": {"error": "NONE"}}, "appended": True}
    assert run_vector(prod).outcome == harness.AGREE
    prod["steps"][0]["input"]["partitions"] = ["t-0", "t-1"]
    prod["initial_state"]["replica_magic"] = {"t-0": 2, "t-1": 2}
    report = run_vector(prod)
    assert report.outcome == harness.NOT_EXPRESSIBLE and "one leader partition" in report.reason


def test_the_poisoned_manager_disagrees_if_the_state_were_kept() -> None:
    cli99 = _copy("CLI-99")
    del cli99["steps"][1]  # no poison flag: the invalid transition only throws
    report = run_vector(cli99)
    assert report.outcome == harness.DISAGREE
    # (steps count from 1) READY stays READY, so beginTransaction, then beginAbort, are valid; beginCommit,
    # maybeAddPartition and initializeTransactions while the abort's result is not awaited throw (KAFKA-13412's
    # pendingTransition), as sendOffsetsToTransaction does
    assert {(s, d.field) for s, d in report.differences} == {
        (2, "has_fatal_error"), (3, "exception"), (4, "exception")}


def test_an_error_answer_to_add_partitions_leaves_the_sets_untracked() -> None:
    cli95 = _copy("CLI-95")
    cli95["steps"][2]["input"]["error"] = "INVALID_TXN_STATE"
    cli95["steps"][2]["expected"] = {"result": "failed"}
    cli95["steps"][5]["expected"] = {}
    report = run_vector(cli95)
    # the later steps' partition fields are then not answered: nothing is compared for them
    assert report.outcome == harness.AGREE
    assert "has_partitions_to_add" in report.steps[3].unchecked


def test_a_retried_add_partitions_keeps_its_partitions_pending() -> None:
    """A retriable answer re-enqueues the request (session 17): the partition stays pending, not added."""
    cli95 = _copy("CLI-95")
    cli95["steps"][2]["input"]["error"] = "CONCURRENT_TRANSACTIONS"
    cli95["steps"][2]["expected"] = {"retry": True}
    cli95["steps"][3]["expected"] = {"has_partitions_to_add": True}
    cli95["steps"][5]["expected"] = {"allowed": False, "has_abortable_error": True}
    report = run_vector(cli95)
    assert report.outcome == harness.AGREE, report.differences
    assert "has_partitions_to_add" not in report.steps[3].unchecked


def test_a_truncation_loads_the_latest_snapshot_below_and_replays_from_it() -> None:
    """rebuildProducerState with producers: the snapshot keeps each producer's last batch only, so a
    duplicate of an earlier batch is no longer found once the state comes from it."""
    def batch(seq: int) -> dict:
        return {"input": {"api": "ProduceBatch", "origin": "CLIENT", "producer_id": 1, "producer_epoch": 0,
                          "base_sequence": seq, "last_sequence": seq, "first_offset": None}, "expected": {}}
    vec = {"id": "T", "mechanism": "produce_validation", "component": "x", "source": {"file": "f", "test": "t"},
           "initial_state": {"producers": {}, "log_end_offset": 0},
           "steps": [batch(0), batch(1), {"input": {"call": "takeSnapshot"}, "expected": {}}, batch(2), batch(3),
                     {"input": {"call": "UnifiedLog.truncateTo", "offset": 3},
                      "expected": {"snapshot_offsets": [2, 3], "producer_state_end_offset": 3,
                                   "state_after": {"1": {"last_seq": 2}}}},
                     {**batch(0), "expected": {"error": "OUT_OF_ORDER_SEQUENCE_NUMBER"}}]}
    report = run_vector(vec)
    assert report.outcome == harness.AGREE, report.differences
    # replayed from the log start instead (no snapshot; none is taken at the log start), batch 0 is still
    # cached: a duplicate, answered with its first offset
    vec["steps"].pop(2)
    vec["steps"][4]["expected"] = {"snapshot_offsets": [3], "producer_state_end_offset": 3}
    vec["steps"][5]["expected"] = {"result": "DUPLICATE", "error": "NONE", "first_offset": 0}
    report = run_vector(vec)
    assert report.outcome == harness.AGREE, report.differences


def test_a_replayed_segment_of_the_last_two_is_snapshotted_at_its_base() -> None:
    """No snapshot left: the replay from the log start snapshots where the last segment begins (the
    first segment's base is the log start, where none is taken), then at the new end."""
    def batch(seq: int) -> dict:
        return {"input": {"api": "ProduceBatch", "origin": "CLIENT", "producer_id": 7, "producer_epoch": 0,
                          "base_sequence": seq, "last_sequence": seq, "first_offset": None}, "expected": {}}
    vec = {"id": "T", "mechanism": "produce_validation", "component": "x", "source": {"file": "f", "test": "t"},
           "initial_state": {"producers": {}, "log_end_offset": 0},
           "steps": [batch(0), {"input": {"call": "roll"}, "expected": {"snapshot_offsets": [1]}}, batch(1), batch(2),
                     {"input": {"call": "deleteProducerSnapshotFiles"}, "expected": {"snapshot_offsets": []}},
                     {"input": {"call": "UnifiedLog.truncateTo", "offset": 2},
                      "expected": {"snapshot_offsets": [1, 2], "producer_state_end_offset": 2,
                                   "state_after": {"7": {"last_seq": 1}}}}]}
    report = run_vector(vec)
    assert report.outcome == harness.AGREE, report.differences
    # an offset inside a batch is not followed
    vec["steps"][3]["input"]["last_sequence"] = 3
    vec["steps"][5]["input"]["offset"] = 3
    report = run_vector(vec)
    assert report.outcome == harness.NOT_EXPRESSIBLE and "inside a batch" in report.reason


def test_an_abort_after_a_partition_was_added_sends_end_txn() -> None:
    cli103 = _copy("CLI-103")
    cli103["steps"].insert(3, {"input": {"event": "AddPartitionsToTxnResponse", "error": "NONE"}, "expected": {}})
    report = run_vector(cli103)
    assert report.outcome == harness.DISAGREE
    assert {(s, d.field) for s, d in report.differences} == {(6, "end_txn_sent"), (6, "client_state")}


def test_drain_with_batches_in_flight_is_not_expressible() -> None:
    cli102 = _copy("CLI-102")
    cli102["initial_state"]["client_partition"] = {"tp0": {"next_sequence": 0}}
    cli102["steps"].insert(1, {"input": {"event": "send tp0 r1"}, "expected": {}})
    report = run_vector(cli102)
    assert report.outcome == harness.NOT_EXPRESSIBLE and "in flight" in report.reason


# --- the file's outcome, pinned per profile --------------------------------------------------------------

#: the client vectors that read a coordinator's answer through the KIP-360 client's handlers
_KIP360 = ("CLI-90", "CLI-95", "CLI-96", "CLI-100", "CLI-102", "CLI-104")


#: before KAFKA-13412 (3.1.1 / 3.2.0) an invalid transition throws KafkaException (3.1.0's and 2.5.0's
#: testInitializeTransactionsTwiceRaisesError assert it); CLI-100's test is 3.6's, but the call is the same
_KAFKA_EXCEPTION_BEFORE_13412 = {
    "CLI-98": "a second initTransactions is an invalid transition: KafkaException before KAFKA-13412",
    "CLI-100": "beginAbort before initTransactions is an invalid transition: KafkaException before KAFKA-13412"}


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    lacks = p.lacks
    disagree = {} if p.client_retry_safe_calls else dict(_KAFKA_EXCEPTION_BEFORE_13412)
    out: dict[str, str] = {}
    if "kip-360" in lacks:
        out.update({v: "kip-360" for v in _KIP360})
    if "kafka-14831" in lacks:
        out["CLI-99"] = "kafka-14831"
    if "kip-890-verification" in lacks:
        # the v4 request is KIP-588's version range too, which is checked first
        out["SM-81b"] = "kip-588" if "kip-588" in lacks else "kip-890-verification"
    for v in out:
        disagree.pop(v, None)
    return disagree, out


def test_the_more3_vectors_totals_are_pinned() -> None:
    run = harness.run_file(load_vectors(MORE3))
    assert run.variant == "kafka-2024-10"
    assert len(run.vectors) == 33 and all(v.outcome == harness.AGREE for v in run.vectors)


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more3_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE3), name, disagree, inexpressible)


def test_the_derived_pins() -> None:
    assert _derived("kafka-3.6") == ({}, {})
    assert _derived("kafka-3.1.1-3.2") == _derived("kafka-3.3-3.5")
    assert set(_derived("kafka-3.0-3.1.0")[0]) == {"CLI-98", "CLI-100"}
    assert set(_derived("kafka-2.4.1")[0]) == {"CLI-98"}
    assert set(_derived("kafka-3.3-3.5")[1]) == {"CLI-99", "SM-81b"}
    assert len(_derived("kafka-2.0-2.3")[1]) == 8


def test_the_file_repeats_no_earlier_vector_or_test() -> None:
    data = json.loads(MORE3.read_text())
    assert "WRITTEN BY EOSCHECK'S DEVELOPERS (session 16)" in data["schema"]["description"]
    assert data["counts"]["total"] == len(data["vectors"]) == 33
    ids = [v["id"] for v in data["vectors"]]
    assert len(set(ids)) == len(ids)
    mine = {(v["source"]["file"], v["source"]["test"]) for v in data["vectors"]}
    assert len(mine) == 32  # SM-81 and SM-81b are one parameterized test
    for other in ("sample", "written", "client", "broker", "more", "more2"):
        earlier = json.loads((MORE3.parent / f"kafka-unit-test-vectors.{other}.json").read_text())
        assert not set(ids) & {v["id"] for v in earlier["vectors"]}, other
        tests = {(v["source"]["file"], v["source"]["test"]) for v in earlier["vectors"]}
        assert not mine & tests, other
