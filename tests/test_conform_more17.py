"""Session 26's vectors (``tests/data/kafka-unit-test-vectors.more17.json``): the idempotent producer's close while its
producer id is reset (SenderTest, KAFKA-8061), the transactional handlers' retry back-off (KAFKA-5477) and the producer
without idempotence (KIP-91's delivery timeout), pinned per profile; comparisons that can fail; the rules' older
versions, which no profile reaches through a vector, on the rules directly."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conform_pins import (
    assert_coverage_table_names_vectors,
    assert_pinned,
    outcome_totals,
    profiles_with,
    run_vector,
    vectors_by_id,
)
from eoscheck.model.api import client as api
from eoscheck.model.api.protocol import FEATURE_SINCE, PROFILE_TABLE, PROFILES, SWITCH_HISTORY, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.errors import RETRIABLE, Errors
from eoscheck.model.producer.no_idempotence import can_retry, drained_batch_ids, is_idempotent
from eoscheck.model.producer.retry_backoff import ADD_PARTITIONS_RETRY_BACKOFF_MS, retry_backoff_ms, send_delay_ms
from eoscheck.model.producer.sender_close import producer_id_fetch_on_close
from eoscheck.model.producer.txn_offset_commit_version import GroupMetadataCheck
from eoscheck.model.producer.txn_offset_commit_version import build as build_txn_offset_commit

MORE17 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more17.json"
#: the vectors on the interface's (KIP-360) producer client
KIP360_CLIENT = ("CLI-260", "CLI-261", "CLI-262", "CLI-263", "CLI-264")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    lacks = protocol(name).lacks
    inexpressible: dict[str, str] = {}
    if "kip-360" in lacks:
        inexpressible.update(dict.fromkeys(KIP360_CLIENT, "kip-360"))
    if "kip-360" in lacks:
        inexpressible["CLI-267"] = "kip-360"
    elif protocol(name).txn_offset_commit_group_metadata == "unchecked":
        inexpressible["CLI-267"] = "2.5.x's TxnOffsetCommit builder has no group-metadata check"
    if "kip-91" in lacks:
        # a batch expired in flight (delivery.timeout.ms); CLI-265, the producer without idempotence, reads at every
        # profile
        inexpressible["CLI-266"] = "kip-91"
    return {}, inexpressible


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more17_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE17), name, disagree, inexpressible)


def test_the_default_run_agrees_and_the_counts_per_profile_are_the_documented_ones() -> None:
    vf = load_vectors(MORE17)
    assert outcome_totals(harness.run_file(vf)) == {"agree": 8, "disagree": 0, "not expressible": 0}
    got = {n: tuple(outcome_totals(harness.run_file(vf, n)).values()) for n in PROFILE_TABLE}
    assert {n for n, t in got.items() if t != (8, 0, 0)} == {"kafka-2.5", "kafka-2.4.1", "kafka-2.4.0", "kafka-2.1-2.3",
                                                             "kafka-2.0.1", "kafka-2.0.0"}
    assert got["kafka-2.5"] == (7, 0, 1)
    assert got["kafka-2.4.1"] == got["kafka-2.4.0"] == (2, 0, 6)
    # 2.1-2.3 has KIP-91 (CLI-266 agrees there), 2.0.x has not
    assert got["kafka-2.1-2.3"] == got["kafka-2.4.0"]
    assert got["kafka-2.0.1"] == got["kafka-2.0.0"] == (1, 0, 7)


def test_the_features_and_their_versions() -> None:
    assert FEATURE_SINCE["kafka-8061"].first == (2, 2, 0) and FEATURE_SINCE["kip-91"].first == (2, 1, 0)
    # KAFKA-8061 falls inside kafka-2.1-2.3's range: the profile lacks it; KIP-91 is kafka-2.1-2.3's first version's
    # (KIP-211's split of kafka-2.0.1-2.3, now an alias of kafka-2.0.1, which lacks both)
    assert {"kafka-8061", "kip-91"} <= protocol("kafka-2.0.1-2.3").lacks
    assert protocol("kafka-2.1-2.3").lacks & {"kafka-8061", "kip-91"} == {"kafka-8061"}
    assert not {"kafka-8061", "kip-91"} & protocol("kafka-2.4.0").lacks
    (v,) = [r for r in harness.run_file(load_vectors(MORE17), "kafka-2.0.1-2.3").vectors if r.id == "CLI-266"]
    assert "KIP-91" in v.reason and "kafka-2.0.1:" in v.reason and "which this version lacks" in v.reason
    (v,) = [r for r in harness.run_file(load_vectors(MORE17), "kafka-2.1-2.3").vectors if r.id == "CLI-266"]
    assert v.outcome == harness.AGREE


def _changed(vid: str, change: Callable[[dict[str, Any]], object], variant: str | None = None) -> str:
    v = copy.deepcopy(vectors_by_id(MORE17)[vid])
    change(v)
    return run_vector(v, variant).outcome


def _step(index: int, **changes: object) -> Callable[[dict[str, Any]], None]:
    def change(v: dict[str, Any]) -> None:
        v["steps"][index]["input"].update(changes)
    return change


def test_the_close_comparisons_can_fail() -> None:
    # without the new producer id nothing drains: the batches stay undrained
    assert _changed("CLI-260", lambda v: v["steps"].pop(4)) == harness.DISAGREE
    # a graceful close instead of the forced one: run() would keep calling runOnce, which the vector does not write
    assert _changed("CLI-261", _step(3, call="sender.initiateClose()")) == harness.NOT_EXPRESSIBLE
    # no close at all: run()'s main loop never ends
    assert _changed("CLI-261", lambda v: v["steps"].pop(3)) == harness.NOT_EXPRESSIBLE


def test_the_close_reads_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness asks ``producer_id_fetch_on_close``: 2.1.1's answer (KAFKA-5503 without KAFKA-8061) leaves the
    InitProducerId unsent, so the graceful close never drains."""
    monkeypatch.setattr(api, "producer_id_fetch_on_close", lambda **_: "skip")
    assert run_vector(vectors_by_id(MORE17)["CLI-260"]).outcome == harness.DISAGREE
    monkeypatch.setattr(api, "producer_id_fetch_on_close", lambda **_: "block")
    # runOnce after the forced close does not return
    assert run_vector(vectors_by_id(MORE17)["CLI-261"]).outcome == harness.DISAGREE


def test_the_back_off_comparisons_can_fail() -> None:
    # CONCURRENT_TRANSACTIONS before any partition is in the transaction: 20 ms
    assert _changed("CLI-262", _step(2, error="CONCURRENT_TRANSACTIONS")) == harness.DISAGREE
    assert _changed("CLI-262", lambda v: v["initial_state"]["producer"].update(retry_backoff_ms=50)) == harness.DISAGREE
    assert _changed("CLI-263", lambda v: v["initial_state"]["producer"].update(retry_backoff_ms=10)) == harness.DISAGREE
    assert _changed("CLI-264", lambda v: v["initial_state"]["producer"].pop("retry_backoff_ms")) == harness.DISAGREE


def test_the_producer_without_idempotence_comparisons_can_fail() -> None:
    # a retriable answer re-enqueues the batch: not done, no error
    assert _changed("CLI-265", _step(1, error="NOT_LEADER_OR_FOLLOWER")) == harness.DISAGREE
    # an idempotent producer's request has a producer id
    assert _changed("CLI-265", lambda v: v["initial_state"]["producer"].update(idempotent=True)) != harness.AGREE
    # not expired: the retriable answer is retried, and the next runOnce sends it again
    assert _changed("CLI-266", _step(1, event="response r1")) == harness.DISAGREE


def test_the_txn_offset_commit_version_comparisons_can_fail() -> None:
    # a coordinator with v3 takes the group metadata: the request is sent, the result still pending
    assert _changed("CLI-267", _step(5, txn_offset_commit_max_version=3)) == harness.DISAGREE
    # no group metadata (the groupId-only commit): sent at v2
    assert _changed("CLI-267", lambda v: v["steps"][5]["input"].pop("group_metadata")) == harness.DISAGREE
    # 2.6 .. 2.8 with Streams' internal.auto.downgrade.txn.commit: sent without the metadata
    assert _changed("CLI-267", _step(5, auto_downgrade_txn_commit=True), "kafka-2.6") == harness.DISAGREE
    assert _changed("CLI-267", _step(5, auto_downgrade_txn_commit=True), "kafka-3.0-3.1.0") == harness.AGREE


def test_the_txn_offset_commit_version_rule() -> None:
    checks: tuple[GroupMetadataCheck, ...] = ("config", "refuse")
    for check in checks:
        assert build_txn_offset_commit(2, group_metadata_set=True, check=check, auto_downgrade=False) == "refuse"
        assert build_txn_offset_commit(3, group_metadata_set=True, check=check, auto_downgrade=False) == "send"
        assert build_txn_offset_commit(2, group_metadata_set=False, check=check, auto_downgrade=False) == "send"
    assert build_txn_offset_commit(2, group_metadata_set=True, check="config", auto_downgrade=True) == "downgrade"
    assert build_txn_offset_commit(2, group_metadata_set=True, check="refuse", auto_downgrade=True) == "refuse"
    assert build_txn_offset_commit(2, group_metadata_set=True, check="unchecked", auto_downgrade=False) == "unchecked"
    assert SWITCH_HISTORY["txn_offset_commit_group_metadata"] == (((2, 0, 0), "unchecked"), ((2, 6, 0), "config"),
                                                                  ((3, 0, 0), "refuse"))
    assert profiles_with(lambda p: p.txn_offset_commit_group_metadata == "config") == {"kafka-2.6", "kafka-2.7-2.8"}


def test_the_close_rule_per_version() -> None:
    def fetch(forced: bool, **flags: bool) -> str:
        return producer_id_fetch_on_close(forced=forced, **{"kafka_5503": False, "kafka_8061": False, "kip_360": False,
                                                             **flags})
    # 2.0.0 .. 2.1.0: the wait ignores the close
    assert (fetch(False), fetch(True)) == ("send", "block")
    # 2.1.1: KAFKA-5503 stops the wait once running is false: a graceful close never gets a producer id
    assert (fetch(False, kafka_5503=True), fetch(True, kafka_5503=True)) == ("skip", "skip")
    # 2.2.0 .. 2.4.x: KAFKA-8061
    assert (fetch(False, kafka_5503=True, kafka_8061=True), fetch(True, kafka_5503=True, kafka_8061=True)) == (
        "send", "skip")
    # 2.5.0 on: InitProducerId is a queued request runOnce sends whatever the close
    assert fetch(False, kafka_8061=True, kip_360=True) == fetch(True, kafka_8061=True, kip_360=True) == "send"


def test_the_retry_back_off_rule() -> None:
    tx = Errors.CONCURRENT_TRANSACTIONS
    assert retry_backoff_ms("AddPartitionsToTxn", tx, partitions_in_transaction=False, retry_backoff=100) == 20
    assert ADD_PARTITIONS_RETRY_BACKOFF_MS == 20
    # the smaller of the two: a producer configured below 20 ms keeps its own
    assert retry_backoff_ms("AddPartitionsToTxn", tx, partitions_in_transaction=False, retry_backoff=10) == 10
    # a partition already in the transaction, another error, another request: retry.backoff.ms
    assert retry_backoff_ms("AddPartitionsToTxn", tx, partitions_in_transaction=True, retry_backoff=100) == 100
    assert retry_backoff_ms("AddPartitionsToTxn", Errors.COORDINATOR_NOT_AVAILABLE, partitions_in_transaction=False,
                            retry_backoff=100) == 100
    assert retry_backoff_ms("AddOffsetsToTxn", tx, partitions_in_transaction=False, retry_backoff=100) == 100
    assert send_delay_ms(is_retry=False, handler_backoff=100) == 0
    assert send_delay_ms(is_retry=True, handler_backoff=100) == 100


def test_the_producer_without_idempotence_rule() -> None:
    assert not is_idempotent(drained_batch_ids()) and drained_batch_ids() == (-1, -1, -1)
    retriable = Errors.NOT_LEADER_OR_FOLLOWER
    assert retriable in RETRIABLE
    assert can_retry(retriable, attempts_left=True, done=False, delivery_timed_out=False, kip_91=True)
    assert not can_retry(retriable, attempts_left=False, done=False, delivery_timed_out=False, kip_91=True)
    assert not can_retry(Errors.TOPIC_AUTHORIZATION_FAILED, attempts_left=True, done=False, delivery_timed_out=False,
                         kip_91=True)
    # KIP-91 (2.1.0): a batch past delivery.timeout.ms or already done is never retried; 2.0.x had neither check
    assert not can_retry(retriable, attempts_left=True, done=True, delivery_timed_out=True, kip_91=True)
    assert can_retry(retriable, attempts_left=True, done=True, delivery_timed_out=True, kip_91=False)


def test_the_coverage_table_names_each_vector() -> None:
    assert_coverage_table_names_vectors(MORE17)
