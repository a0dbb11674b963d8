"""Session 25's vectors (``tests/data/kafka-unit-test-vectors.more12.json``, conf25a): the producer client's
authorization errors, TransactionManagerTest's and SenderTest's tests read at 1eb7644 (two again at 4.2.0-rc1), pinned
per profile; the handlers' table, the partition errors of AddPartitionsToTxn and the Sender's reset after an
InitProducerId authorization error (KAFKA-13668) checked on the interface directly, with each comparison shown able to
fail."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from conform_pins import assert_coverage_table_names_vectors, assert_pinned, profiles_with, run_vector, vectors_by_id
from eoscheck.model.api import client as api
from eoscheck.model.api.protocol import PROFILES, SWITCH_HISTORY, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.errors import Errors
from eoscheck.model.producer import txn_calls as tc

MORE12 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more12.json"
#: KAFKA-13668 (ea81e99e598, first tag 3.6.0): InitProducerId's authorization errors abortable, then UNINITIALIZED
KAFKA_13668 = ("CLI-201", "CLI-218")
#: 4.2.0-rc1's assertFutureThrows(TransactionAbortedException.class, ...): KAFKA-10186 (2.7.0), KafkaException before
KAFKA_10186 = ("CLI-220",)


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    ids = list(vectors_by_id(MORE12))
    if "kip-360" in p.lacks:
        # the interface's producer client is the KIP-360 client (2.5+)
        return {}, dict.fromkeys(ids, "kip-360")
    disagree: dict[str, str] = {}
    if not p.client_auth_init_abortable:
        disagree.update(dict.fromkeys(KAFKA_13668, "InitProducerId's authorization error is fatal before 3.6.0"))
    if p.client_abort_exception != "TransactionAbortedException":
        disagree.update(dict.fromkeys(KAFKA_10186, "an abort fails undrained batches with KafkaException before 2.7.0"))
    return disagree, {}


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more12_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE12), name, disagree, inexpressible)


def test_the_default_run_agrees_and_judges_the_4_2_reads_under_their_tag() -> None:
    run = harness.run_file(load_vectors(MORE12))
    assert run.variant == "kafka-2024-10"
    assert {v.id: v.variant for v in run.vectors if v.variant != "kafka-2024-10"} == {
        "CLI-220": "kafka-4.2", "CLI-221": "kafka-4.2"}
    assert all(v.outcome == harness.AGREE for v in run.vectors)
    assert len(run.vectors) == 22


def test_the_coverage_table_names_the_vectors() -> None:
    assert_coverage_table_names_vectors(MORE12)


def test_kafka_13668_is_the_3_6_0_and_later_profiles() -> None:
    assert SWITCH_HISTORY["client_auth_init_abortable"] == (((2, 0, 0), False), ((3, 6, 0), True))
    assert profiles_with(lambda p: p.client_auth_init_abortable) == profiles_with(
        lambda p: p.client_transitions in ("3.6", "4.0", "4.1"))


def _changed(vid: str, step: int, variant: str | None = None, **inp: object) -> str:
    v = copy.deepcopy(vectors_by_id(MORE12)[vid])
    v["steps"][step]["input"].update(inp)
    return run_vector(v, variant).outcome


def test_the_comparisons_can_fail() -> None:
    # the handler's table: another error answering the same request gives another reaction
    assert _changed("CLI-200", 1, error="GROUP_AUTHORIZATION_FAILED") == harness.DISAGREE
    assert _changed("CLI-201", 2, error="CLUSTER_AUTHORIZATION_FAILED") == harness.DISAGREE  # another exception
    assert _changed("CLI-216", 2, error="TOPIC_AUTHORIZATION_FAILED") == harness.DISAGREE  # abortable, not fatal
    assert _changed("CLI-215", 3, error="TRANSACTIONAL_ID_AUTHORIZATION_FAILED") == harness.DISAGREE  # fatal: no READY
    # the partition errors: with no refused topic the error is a KafkaException naming none
    assert _changed("CLI-207", 5, errors={"foo-0": "OPERATION_NOT_ATTEMPTED", "bar-0": "OPERATION_NOT_ATTEMPTED"}) \
        == harness.DISAGREE
    # a retriable partition error returns early: the partitions stay pending, nothing is abortable
    assert _changed("CLI-217", 3, error="COORDINATOR_LOAD_IN_PROGRESS") == harness.DISAGREE
    # the group's answer to the offsets' TxnOffsetCommit
    assert _changed("CLI-203", 5, errors={"foo-0": "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"}) == harness.DISAGREE
    # produce: TOPIC_AUTHORIZATION_FAILED is abortable, CLUSTER_AUTHORIZATION_FAILED fatal
    assert _changed("CLI-219", 1, error="TOPIC_AUTHORIZATION_FAILED") == harness.DISAGREE
    assert _changed("CLI-212", 0, event="tp0 produce ok x2 (seq 0,1); tp0 produce -> CLUSTER_AUTHORIZATION_FAILED") \
        == harness.DISAGREE


def test_inittransactions_authorization_errors_by_version() -> None:
    for error, exc in ((Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "TransactionalIdAuthorizationException"),
                       (Errors.CLUSTER_AUTHORIZATION_FAILED, "ClusterAuthorizationException")):
        assert api.on_txn_response("InitProducerId", int(error), can_bump_epoch=True) == ("abortable", exc, False)
        assert api.on_txn_response("InitProducerId", int(error), can_bump_epoch=True, auth_init_abortable=False) == \
            ("fatal", exc, False)
    for request in ("FindCoordinator", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn"):
        assert api.on_txn_response(request, int(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED), can_bump_epoch=True) == \
            ("fatal", "TransactionalIdAuthorizationException", False)
    for request in ("FindCoordinator", "AddOffsetsToTxn"):
        assert api.on_txn_response(request, int(Errors.GROUP_AUTHORIZATION_FAILED), can_bump_epoch=True) == \
            ("abortable", "GroupAuthorizationException", False)
    # EndTxn does not name GROUP_AUTHORIZATION_FAILED: an unexpected, fatal error
    assert api.on_txn_response("EndTxn", int(Errors.GROUP_AUTHORIZATION_FAILED), can_bump_epoch=True).action == "fatal"


def test_add_partitions_collects_refused_topics_and_returns_early_on_other_errors() -> None:
    a = api.on_add_partitions_errors({"foo-0": int(Errors.TOPIC_AUTHORIZATION_FAILED), "foo-1": int(Errors.TOPIC_AUTHORIZATION_FAILED),
                                      "bar-0": int(Errors.OPERATION_NOT_ATTEMPTED)}, can_bump_epoch=True)
    assert (a.reaction.action, a.reaction.exception, a.dropped, a.unauthorized_topics) == \
        ("abortable", "TopicAuthorizationException", True, ("foo",))
    a = api.on_add_partitions_errors({"foo-0": int(Errors.OPERATION_NOT_ATTEMPTED)}, can_bump_epoch=True)
    assert (a.reaction.exception, a.dropped, a.unauthorized_topics) == ("KafkaException", True, ())
    a = api.on_add_partitions_errors({"foo-0": int(Errors.TOPIC_AUTHORIZATION_FAILED),
                                      "bar-0": int(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)}, can_bump_epoch=True)
    assert (a.reaction.action, a.dropped) == ("fatal", False)
    c = api.partitions_not_added(tc.TxnClient(tc.IN_TRANSACTION, new=frozenset({"foo-0"}), pending=frozenset({"bar-0"}),
                                              added=frozenset({"tp1"})), frozenset({"foo-0", "bar-0"}))
    assert (c.new, c.pending, c.added) == (frozenset(), frozenset(), frozenset({"tp1"}))


def test_the_sender_resets_after_an_init_authorization_error_only() -> None:
    init = tc.PendingCall(tc.INITIALIZING, "initTransactions")
    c = tc.TxnClient(tc.ABORTABLE_ERROR, "TransactionalIdAuthorizationException", pending_call=init)
    r = api.handle_authorization_error(c, "3.6")
    assert r is not None and r.client.state == tc.UNINITIALIZED and r.client.last_error == ""
    assert r.client.pending_call == init._replace(completed=True, error="TransactionalIdAuthorizationException")
    assert api.handle_authorization_error(c._replace(last_error="TopicAuthorizationException"), "3.6") is None
    assert api.handle_authorization_error(c._replace(state=tc.FATAL_ERROR), "3.6") is None
    # the 2.5 table has no ABORTABLE_ERROR -> UNINITIALIZED (the same commit added it)
    assert api.handle_authorization_error(c, "2.5") == tc.CallResult(c, "IllegalStateException")


def test_an_error_state_fails_the_queued_end_txn_with_the_last_error() -> None:
    commit = tc.PendingCall(tc.COMMITTING, "commitTransaction")
    c = tc.TxnClient(tc.ABORTABLE_ERROR, "TopicAuthorizationException", started=True, pending_call=commit)
    r = tc.next_request_to_end(c, "3.6", has_incomplete_batches=False)
    assert (r.request, r.end_txn_failed) == ("", True)
    assert r.client.pending_call == commit._replace(completed=True, error="TopicAuthorizationException")
    # incomplete batches hold the EndTxn back first
    assert not tc.next_request_to_end(c, "3.6", has_incomplete_batches=True).end_txn_failed
