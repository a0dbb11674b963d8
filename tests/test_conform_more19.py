"""Session 26's ``tests/data/kafka-unit-test-vectors.more19.json``: several transactional ids in one coordinator (the
expiry task over several __transaction_state partitions, KAFKA-13099; a broker's AddPartitionsToTxn v4 batch of two
transactions, KIP-890 part 1) and the Sender's request order (AddPartitionsToTxn, produce, EndTxn) and its abort of
in-flight batches in a fatal error, pinned per profile; comparisons that can fail; the partition rule on its own."""

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
    run_vector,
    vectors_by_id,
)
from eoscheck.model.api.protocol import FEATURE_SINCE, PROFILE_TABLE, PROFILES, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.coordinator.txn_partitions import java_string_hash, partition_for, tombstone_partitions

MORE19 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more19.json"
CLIENT = ("CLI-300", "CLI-301", "CLI-302", "CLI-303")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    lacks = protocol(name).lacks
    inexpressible: dict[str, str] = {}
    if "kafka-13099" in lacks:
        inexpressible.update(dict.fromkeys(("BRK-TSM-30", "BRK-TSM-31"), "kafka-13099"))
    # the first feature the batch needs that the version lacks: PRODUCER_FENCED's (read from the answers), then v4's
    for feature in ("kip-588", "kip-890-verification"):
        if feature in lacks:
            inexpressible["BRK-KA-50"] = feature
            break
    if "kip-360" in lacks:
        # the interface's client is the KIP-360 client
        inexpressible.update(dict.fromkeys(CLIENT, "kip-360"))
    return {}, inexpressible


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more19_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE19), name, disagree, inexpressible)


def test_the_default_run_agrees_and_the_counts_per_profile_are_the_documented_ones() -> None:
    vf = load_vectors(MORE19)
    assert outcome_totals(harness.run_file(vf)) == {"agree": 7, "disagree": 0, "not expressible": 0}
    got = {n: tuple(outcome_totals(harness.run_file(vf, n)).values()) for n in PROFILE_TABLE}
    assert {n for n, t in got.items() if t == (7, 0, 0)} == {
        "kafka-later-trunk", "kafka-4.2", "kafka-4.1.1", "kafka-4.1.0", "kafka-4.0.1", "kafka-4.0.0", "kafka-2024-10",
        "kafka-3.8-3.9", "kafka-3.7", "kafka-3.6"}
    assert got["kafka-3.3-3.5"] == got["kafka-3.1.1-3.2"] == got["kafka-3.0-3.1.0"] == (6, 0, 1)
    assert got["kafka-2.7-2.8"] == got["kafka-2.6"] == got["kafka-2.5"] == (4, 0, 3)
    assert got["kafka-2.4.1"] == got["kafka-2.4.0"] == got["kafka-2.1-2.3"] == got["kafka-2.0.1"] == got["kafka-2.0.0"] \
        == (0, 0, 7)


def test_kafka_13099_and_its_backports() -> None:
    # first in 2.6.3, 2.7.2 and 2.8.1, but 2.7.0, 2.7.1 and 2.8.0 lack it: every release from 2.8.1 on has it
    assert FEATURE_SINCE["kafka-13099"].first == (2, 8, 1)
    assert "kafka-13099" in protocol("kafka-2.7-2.8").lacks and "kafka-13099" not in protocol("kafka-3.0-3.1.0").lacks
    (v,) = [r for r in harness.run_file(load_vectors(MORE19), "kafka-2.7-2.8").vectors if r.id == "BRK-TSM-30"]
    assert "KAFKA-13099" in v.reason and "versions before 2.8.1 lack" in v.reason


def test_partition_for_is_kafkas() -> None:
    # String.hashCode; TransactionStateManagerTest's set-up and testDeletePartition assert these partitions of 2
    assert java_string_hash("hello") == 99162322 and java_string_hash("") == 0
    assert partition_for("one", 2) == partition_for("two", 2) == partition_for("b", 2) == 0
    assert partition_for("a", 2) == 1
    # a negative hash: Utils.abs, and Integer.MIN_VALUE maps to 0
    assert java_string_hash("polygenelubricants") == -2 ** 31 and partition_for("polygenelubricants", 7) == 0
    assert java_string_hash("id_10") < 0 or partition_for("id_10", 2) == java_string_hash("id_10") % 2
    with pytest.raises(ValueError):
        partition_for("a", 0)
    assert tombstone_partitions({"a": 1, "b": 0, "c": 1}, [1]) == (0,)
    assert tombstone_partitions({"a": 1}, []) == (1,)


def _changed(vid: str, change: Callable[[dict[str, Any]], object], variant: str | None = None) -> str:
    v = copy.deepcopy(vectors_by_id(MORE19)[vid])
    change(v)
    return run_vector(v, variant).outcome


def test_the_expiry_comparisons_can_fail() -> None:
    # every partition online: partition 1's ids expire too
    assert _changed("BRK-TSM-30", lambda v: v["initial_state"].update(offline_partitions=[])) == harness.DISAGREE
    # the other partition offline
    assert _changed("BRK-TSM-30", lambda v: v["initial_state"].update(offline_partitions=[0])) == harness.DISAGREE
    # a failed append leaves every id expirable
    assert _changed("BRK-TSM-31", lambda v: v["steps"][0]["input"].update(tombstone_append_result="NOT_ENOUGH_REPLICAS")) \
        == harness.DISAGREE
    # one id not yet old enough stays
    assert _changed("BRK-TSM-31", lambda v: v["initial_state"]["txn7"].update(txn_last_update_timestamp="now")) \
        == harness.DISAGREE
    # without the partition count every id is of one partition: tombstone_partitions is not observed
    assert _changed("BRK-TSM-31", lambda v: v["initial_state"].pop("transaction_state_partitions")) == harness.AGREE


def test_the_batch_comparisons_can_fail() -> None:
    def route(v: dict[str, Any]) -> None:
        v["steps"][0]["input"]["transactions"][0]["verify_only"] = True
    # txnId1 verified instead of added: not in the transaction
    assert _changed("BRK-KA-50", route) == harness.DISAGREE
    # txnId2 added instead of verified: the add is fenced too, so the routing is read from txnId1
    assert _changed("BRK-KA-50", lambda v: v["initial_state"]["txn1"].update(producer_epoch=1)) == harness.DISAGREE
    # a partition the metadata cache does not know stops only its own transaction
    def unknown(v: dict[str, Any]) -> None:
        v["steps"][0]["input"]["transactions"][0]["partitions"] = ["other-0"]
        v["steps"][0]["expected"]["errors"]["txnId1"] = {"other-0": "UNKNOWN_TOPIC_OR_PARTITION"}
    assert _changed("BRK-KA-50", unknown) == harness.AGREE
    def twice(v: dict[str, Any]) -> None:
        v["steps"][0]["input"]["transactions"][1]["transactional_id"] = "txnId1"
    assert _changed("BRK-KA-50", twice) == harness.NOT_EXPRESSIBLE


def _drop(vid: str, *indexes: int) -> Callable[[dict[str, Any]], None]:
    def change(v: dict[str, Any]) -> None:
        v["steps"] = [s for i, s in enumerate(v["steps"]) if i not in indexes]
    return change


def test_the_sender_order_comparisons_can_fail() -> None:
    # no produce answer: the EndTxn still waits for the batch in flight
    assert _changed("CLI-300", _drop("CLI-300", 12)) == harness.DISAGREE
    # the AddPartitionsToTxn answer never read: tp0 is not in the transaction, so nothing drains
    assert _changed("CLI-300", _drop("CLI-300", 7, 8)) == harness.DISAGREE
    # tp1 added before the first answer is read: it goes in the first request, and the next loop sends nothing
    def early(v: dict[str, Any]) -> None:
        v["steps"].insert(3, v["steps"].pop(6))
    assert _changed("CLI-301", early) == harness.DISAGREE
    # the second AddPartitionsToTxn not answered: still in flight, so the loop sends no produce data
    assert _changed("CLI-301", _drop("CLI-301", 11, 12)) == harness.DISAGREE
    # a batch never drained is aborted in the abortable error
    assert _changed("CLI-302", _drop("CLI-302", 5, 6, 7)) != harness.AGREE


def test_the_fatal_abort_comparisons_can_fail() -> None:
    # tp1's answer read before the fatal one: nothing is in flight to abort
    def first(v: dict[str, Any]) -> None:
        v["steps"].insert(2, v["steps"].pop(5))
    assert _changed("CLI-303", first) == harness.DISAGREE


def test_the_coverage_table_names_the_vectors() -> None:
    assert_coverage_table_names_vectors(MORE19)
