"""Session 27's ``tests/data/kafka-unit-test-vectors.more25.json``: KafkaProducerTest's tests of how ``new
ProducerConfig`` settles enable.idempotence against acks, retries and max.in.flight.requests.per.connection (read at
1eb7644 and 4.2.0-rc1) and its transactional tests as the TransactionManager calls KafkaProducer makes, pinned per
profile; comparisons that can fail; the rule on its own."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from conform_pins import (
    assert_coverage_table_names_vectors,
    assert_pinned,
    outcome_totals,
    run_vector,
    vectors_by_id,
)
from eoscheck.model.api.protocol import PROFILE_TABLE, PROFILES, SWITCH_HISTORY, client_tv2, history_value, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.producer.idempotence_config import settle

MORE25 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more25.json"
CONFIG = ("CLI-400", "CLI-401", "CLI-402", "CLI-403", "CLI-404")
#: the transactional tests; CLI-407 reads no coordinator answer, so it needs no KIP-360 client
TXN = tuple(f"CLI-{n}" for n in range(405, 414))
#: the transaction-version-2 tests (4.2.0-rc1)
TV2 = ("CLI-414", "CLI-415", "CLI-416")
#: close(1000 ms) with initTransactions pending
CLOSE = ("CLI-417", "CLI-418", "CLI-419")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    disagree: dict[str, str] = {}
    inexpressible: dict[str, str] = {}
    if p.idempotence_config == "unread":
        inexpressible.update(dict.fromkeys(CONFIG, "before KAFKA-13673 the idempotence defaults are not modelled"))
    elif p.idempotence_config == "4.0":
        disagree["CLI-403"] = "KAFKA-17927 (4.0.0): 6 in flight is refused with a default idempotence"
    else:
        disagree["CLI-404"] = "before KAFKA-17927 6 in flight turns a default idempotence off"
    if not p.client_retry_safe_calls:
        disagree.update(dict.fromkeys(("CLI-405", "CLI-407"), "before KAFKA-13412 a timed-out call is not retried"))
    if not p.client_auth_init_abortable:
        disagree["CLI-408"] = "before KAFKA-13668 CLUSTER_AUTHORIZATION_FAILED answering InitProducerId is fatal"
    if "kip-360" in p.lacks:
        for vid in TXN:
            if vid != "CLI-407":
                disagree.pop(vid, None)
                inexpressible[vid] = "kip-360"
    if "kafka-6635" in p.lacks:
        inexpressible["CLI-417"] = "kafka-6635"
    if "kip-360" in p.lacks:
        inexpressible.update(dict.fromkeys(CLOSE[1:], "kip-360"))
    if not client_tv2(p):
        inexpressible.update(dict.fromkeys(TV2, "the profile's client has no transaction version 2"))
    return disagree, inexpressible


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more25_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE25), name, disagree, inexpressible)


def test_the_default_run_judges_each_vector_under_its_tag_and_agrees() -> None:
    run = harness.run_file(load_vectors(MORE25))
    assert outcome_totals(run) == {"agree": 20, "disagree": 0, "not expressible": 0}
    variants = {v.id: v.variant for v in run.vectors}
    assert {variants[v] for v in CONFIG[:4] + TXN + CLOSE} == {"kafka-2024-10"}
    assert {variants[v] for v in ("CLI-404",) + TV2} == {"kafka-4.2"}
    got = {n: tuple(outcome_totals(harness.run_file(load_vectors(MORE25), n)).values()) for n in PROFILE_TABLE}
    assert {n for n, t in got.items() if t == (19, 1, 0)} == {
        "kafka-later-trunk", "kafka-4.2", "kafka-4.1.1", "kafka-4.1.0", "kafka-4.0.1", "kafka-4.0.0"}
    assert {n for n, t in got.items() if t == (16, 1, 3)} == {"kafka-2024-10", "kafka-3.8-3.9", "kafka-3.7", "kafka-3.6"}
    assert got["kafka-3.3-3.5"] == got["kafka-3.1.1-3.2"] == (15, 2, 3)
    assert all(got[n] == (9, 3, 8) for n in ("kafka-3.0-3.1.0", "kafka-2.7-2.8", "kafka-2.6", "kafka-2.5"))
    assert got["kafka-2.4.1"] == got["kafka-2.4.0"] == (1, 1, 18)
    assert got["kafka-2.1-2.3"] == got["kafka-2.0.1"] == got["kafka-2.0.0"] == (0, 1, 19)


def test_the_switch_and_its_first_versions() -> None:
    assert SWITCH_HISTORY["idempotence_config"] == (((2, 0, 0), "unread"), ((3, 1, 1), "3.1.1"), ((4, 0, 0), "4.0"))
    for name, p in PROFILE_TABLE.items():
        assert history_value("idempotence_config", p.first) == history_value("idempotence_config", p.last) \
            == p.protocol.idempotence_config, name


def test_the_rule_on_its_own() -> None:
    six = {"max.in.flight.requests.per.connection": "6"}
    # a default idempotence is turned off before KAFKA-17927, refused after
    assert settle(six, "3.1.1").refused_by == "" and not settle(six, "3.1.1").enable_idempotence
    assert settle(six, "4.0").refused_by == "max.in.flight.requests.per.connection"
    # a user-set idempotence is refused at the first conflicting check: retries before acks before max.in.flight
    both = {"retries": "0", "acks": "1", "enable.idempotence": "true", **six}
    assert settle(both, "3.1.1").refused_by == settle(both, "4.0").refused_by == "retries"
    # retries 0 and 6 in flight with a default idempotence: turned off before 4.0.0, max.in.flight refused after
    r0 = {"retries": "0", **six}
    assert settle(r0, "3.1.1").refused_by == "" and settle(r0, "4.0").refused_by == "max.in.flight.requests.per.connection"
    # nothing set: idempotent, acks -1
    assert settle({}, "4.0")[:2] == (True, "-1")
    with pytest.raises(ValueError):
        settle({}, "unread")
    with pytest.raises(ValueError):
        settle({"acks": "2"}, "4.0")


def _changed(vid: str, step: int, props: dict[str, str], variant: str | None = None) -> str:
    v: dict[str, Any] = copy.deepcopy(vectors_by_id(MORE25)[vid])
    v["steps"][step]["input"]["props"] = props
    return run_vector(v, variant).outcome


def test_the_comparisons_can_fail() -> None:
    # acks all with idempotence unset keeps idempotence on
    assert _changed("CLI-401", 3, {"acks": "all"}) == harness.DISAGREE
    # an explicit enable.idempotence=false with a transactional.id and acks all still throws ...
    assert _changed("CLI-401", 5, {"acks": "all", "enable.idempotence": "false", "transactional.id": "t"}) \
        == harness.AGREE
    # ... but with no transactional.id it is built
    assert _changed("CLI-401", 5, {"acks": "0", "enable.idempotence": "false"}) == harness.DISAGREE
    # retries 1 is no conflict
    assert _changed("CLI-402", 3, {"retries": "1", "enable.idempotence": "true"}) == harness.DISAGREE
    # 5 in flight: the default idempotence stays on at either version
    for vid in ("CLI-403", "CLI-404"):
        assert _changed(vid, 1, {"max.in.flight.requests.per.connection": "5"}) == harness.DISAGREE
    # the transactional.id check is not the one 4.0.0 reaches
    assert _changed("CLI-404", 4, {"max.in.flight.requests.per.connection": "5", "enable.idempotence": "false",
                                   "transactional.id": "t"}) == harness.DISAGREE
    # props the model cannot read: not expressible
    assert _changed("CLI-400", 0, {"acks": "2"}) == harness.NOT_EXPRESSIBLE


def _txn_changed(vid: str, step: int, fields: dict[str, Any], variant: str | None = None) -> str:
    v: dict[str, Any] = copy.deepcopy(vectors_by_id(MORE25)[vid])
    v["steps"][step]["input"].update(fields)
    return run_vector(v, variant).outcome


def test_the_transactional_comparisons_can_fail() -> None:
    # a send's fatal error (an authorization failure) is not abortable: beginCommit still throws, but the state differs
    for vid in ("CLI-410", "CLI-413"):
        assert _txn_changed(vid, 5, {"call": "transactionManager.maybeTransitionToErrorState("
                                              "TransactionalIdAuthorizationException)"}) == harness.DISAGREE
    # no send failure: the commit goes through
    assert _txn_changed("CLI-411", 5, {"call": "transactionManager.hasOngoingTransaction()"}) == harness.DISAGREE
    # InitProducerId refused after the timeout: the retried call is handed the failed result
    assert _txn_changed("CLI-405", 3, {"error": "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"}) == harness.DISAGREE
    # a commit of the empty transaction completes locally as the abort does ...
    assert _txn_changed("CLI-409", 5, {"call": "transactionManager.beginCommit()"}) == harness.AGREE
    # ... but an abort with no transaction begun is an invalid transition
    assert _txn_changed("CLI-409", 4, {"call": "transactionManager.hasOngoingTransaction()"}) == harness.DISAGREE
    # another refusal: the await throws its own exception; a fenced InitProducerId is fatal, no reset to UNINITIALIZED
    assert _txn_changed("CLI-408", 2, {"error": "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"}) == harness.DISAGREE
    assert _txn_changed("CLI-408", 2, {"error": "PRODUCER_FENCED"}) == harness.DISAGREE


def test_the_transaction_version_2_comparisons_can_fail() -> None:
    for vid in TV2:
        # a TV1 client: the partition or the offsets wait for AddPartitionsToTxn / AddOffsetsToTxn
        v: dict[str, Any] = copy.deepcopy(vectors_by_id(MORE25)[vid])
        v["initial_state"]["producer"]["transaction_v2"] = False
        assert run_vector(v, "kafka-4.2").outcome == harness.DISAGREE
    # another retriable produce answer is retried alike (the vector cannot tell them apart)
    assert _txn_changed("CLI-416", 8, {"call": "client.respondToProduce(tp0, NOT_ENOUGH_REPLICAS)"}) == harness.AGREE
    # the offsets refused (UNKNOWN_MEMBER_ID: abortable, the commit throws) or to be retried (still pending)
    assert _txn_changed("CLI-414", 7, {"errors": {"topic-0": "UNKNOWN_MEMBER_ID"}}) == harness.DISAGREE
    assert _txn_changed("CLI-414", 7, {"errors": {"topic-0": "COORDINATOR_LOAD_IN_PROGRESS"}}) == harness.DISAGREE


def test_the_close_comparisons_can_fail() -> None:
    for vid in CLOSE:
        # a graceful close only: the Sender's loop waits on the pending request for ever, nothing is failed
        v: dict[str, Any] = copy.deepcopy(vectors_by_id(MORE25)[vid])
        v["steps"] = [s for s in v["steps"] if s["input"].get("call") != "sender.forceClose()"]
        assert run_vector(v).outcome == harness.DISAGREE


def test_a_send_timeout_is_kept_as_a_transaction_abortable_error_from_kafka_19176() -> None:
    v: dict[str, Any] = copy.deepcopy(vectors_by_id(MORE25)["CLI-411"])
    v["steps"][5]["expected"]["last_error"] = "TimeoutException"
    assert run_vector(v, "kafka-4.0.1").outcome == harness.AGREE
    assert run_vector(v, "kafka-4.1.0").outcome == harness.DISAGREE
    v["steps"][5]["expected"]["last_error"] = "TransactionAbortableException"
    assert run_vector(v, "kafka-4.1.0").outcome == harness.AGREE
    # InvalidTopicException is not retriable: kept as it is
    w: dict[str, Any] = copy.deepcopy(vectors_by_id(MORE25)["CLI-413"])
    w["steps"][5]["expected"]["last_error"] = "InvalidTopicException"
    assert run_vector(w, "kafka-4.2").outcome == harness.AGREE


def test_the_coverage_table_names_the_vectors() -> None:
    assert_coverage_table_names_vectors(MORE25)
