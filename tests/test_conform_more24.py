"""Session 27's ``tests/data/kafka-unit-test-vectors.more24.json``: TransactionMetadataTest's five KAFKA-14563 tests read
at the release tags 4.0.0, 4.1.0 and 4.2.0-rc1, ProducerIdManagerTest's three KAFKA-19990 tests (4.2.0-rc1) and
TransactionStateManagerTest.testDeletePartition (1eb7644 and 4.2.0-rc1), pinned per profile; comparisons that can fail;
the rules they read on their own."""

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
from eoscheck.model.api import coordinator as coordinator_api
from eoscheck.model.api.protocol import PROFILE_TABLE, PROFILES, SWITCH_HISTORY, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.coordinator.producer_ids import ProducerIdBlocks, after_failed_block_request
from eoscheck.model.state import TxnMetadata
from eoscheck.model.transactions.codes import NO_PENDING, TxnState

MORE24 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more24.json"
TV2_ABORTS = tuple(f"SM-{n}" for n in range(200, 209))
FENCES = tuple(f"SM-{n}" for n in range(209, 215))
PIDM = ("BRK-PIDM-10", "BRK-PIDM-11", "BRK-PIDM-12")
TSM = ("BRK-TSM-50", "BRK-TSM-51")
TOPIC_DELETION = ("SM-215", "SM-216")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    disagree: dict[str, str] = {}
    inexpressible: dict[str, str] = {}
    if "transaction-version-2" in p.lacks:
        inexpressible.update(dict.fromkeys(TV2_ABORTS, "transaction-version-2"))
    elif not p.prepare_abort_from_ended:
        disagree.update(dict.fromkeys(TV2_ABORTS, "PrepareAbort follows Empty / CompleteX from KAFKA-14563 (4.0.0)"))
    if not p.pid_block_retry_bodyless:
        disagree.update(dict.fromkeys(PIDM, "before KAFKA-19990 a body-less answer leaves the broker stuck"))
    if not p.offsets_deleted_with_topic:
        disagree.update(dict.fromkeys(TOPIC_DELETION, "before KAFKA-16168 a topic deletion deletes no offsets"))
    return disagree, inexpressible


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more24_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE24), name, disagree, inexpressible)


def test_the_default_run_judges_each_vector_under_its_tag_and_agrees() -> None:
    run = harness.run_file(load_vectors(MORE24))
    assert outcome_totals(run) == {"agree": 22, "disagree": 0, "not expressible": 0}
    assert run.variant == "kafka-2024-10"
    variants = {v.id: v.variant for v in run.vectors}
    assert variants["BRK-TSM-50"] == variants["SM-215"] == "kafka-2024-10"
    assert variants["BRK-TSM-51"] == variants["SM-216"] == "kafka-4.2"
    assert {variants[v] for v in PIDM} == {"kafka-4.2"}
    assert [variants[v] for v in TV2_ABORTS[:3]] == ["kafka-4.0.0", "kafka-4.1.0", "kafka-4.2"]
    got = {n: tuple(outcome_totals(harness.run_file(load_vectors(MORE24), n)).values()) for n in PROFILE_TABLE}
    assert {n for n, t in got.items() if t == (22, 0, 0)} == {"kafka-later-trunk", "kafka-4.2"}
    assert got["kafka-4.1.1"] == got["kafka-4.1.0"] == got["kafka-4.0.1"] == got["kafka-4.0.0"] == (19, 3, 0)
    assert got["kafka-2024-10"] == (10, 12, 0) and got["kafka-3.8-3.9"] == (10, 3, 9)
    assert all(got[n] == (8, 5, 9) for n in PROFILE_TABLE if n not in {
        "kafka-later-trunk", "kafka-4.2", "kafka-4.1.1", "kafka-4.1.0", "kafka-4.0.1", "kafka-4.0.0", "kafka-2024-10",
        "kafka-3.8-3.9"})


def test_the_switches_and_their_first_versions() -> None:
    assert SWITCH_HISTORY["prepare_abort_from_ended"] == (((2, 0, 0), False), ((4, 0, 0), True))
    assert SWITCH_HISTORY["pid_block_retry_bodyless"] == (((2, 0, 0), False), ((4, 2, 0), True))
    assert SWITCH_HISTORY["offsets_deleted_with_topic"] == (((2, 0, 0), False), ((3, 8, 0), True))
    assert not protocol("kafka-2024-10").prepare_abort_from_ended and protocol("kafka-4.0.0").prepare_abort_from_ended
    assert not protocol("kafka-4.1.1").pid_block_retry_bodyless and protocol("kafka-4.2").pid_block_retry_bodyless


def _meta(state: TxnState, tv: int = 2, epoch: int = 735) -> TxnMetadata:
    return TxnMetadata(True, 23423, -1, epoch, -1, int(state), False, NO_PENDING, (), -1, tv)


def test_prepare_abort_from_an_ended_state_is_the_versions_table_for_any_transaction_version() -> None:
    abort = int(TxnState.PREPARE_ABORT)
    p4, snap = protocol("kafka-4.0.0"), protocol("kafka-2024-10")
    for state in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
        tv2 = coordinator_api.prepare_abort_or_commit_checked(_meta(state), abort, 2, -1, p4, no_partition_added=True)
        assert tv2.exception == "" and (tv2.metadata.epoch, tv2.metadata.last_epoch) == (736, 735)
        assert tv2.metadata.state == abort and tv2.metadata.producer_id == 23423
        # a TV0 transit: prepareTransitionTo takes it (4.0.0's table has no version condition) ...
        tv0 = coordinator_api.prepare_abort_or_commit_checked(_meta(state, 0), abort, 0, -1, p4)
        assert tv0.exception == "" and tv0.metadata.epoch == 735 and tv0.metadata.state == abort
        # ... but completeTransitionTo refuses its new start time (allowedEmptyAbort needs TV2)
        assert coordinator_api.prepare_abort_or_commit_checked(_meta(state, 0), abort, 0, -1, p4,
                                                               no_partition_added=True).exception
        # 1eb7644: PrepareAbort only after Ongoing or PrepareEpochFence, whatever the version
        assert coordinator_api.prepare_abort_or_commit_checked(_meta(state), abort, 2, -1, snap).exception
    # PrepareCommit stays Ongoing-only at every version
    assert coordinator_api.prepare_abort_or_commit_checked(_meta(TxnState.EMPTY), int(TxnState.PREPARE_COMMIT), 2, -1,
                                                           p4).exception
    # from Ongoing nothing changed: the start time is the transaction's, TV0 keeps the epoch
    ongoing = coordinator_api.prepare_abort_or_commit_checked(_meta(TxnState.ONGOING, 0), abort, 0, -1, snap,
                                                              no_partition_added=True)
    assert ongoing.exception == "" and ongoing.metadata.epoch == 735


def test_a_bodyless_answer_leaves_the_broker_stuck_only_before_kafka_19990() -> None:
    blocks = ProducerIdBlocks(0, (), 1)
    assert after_failed_block_request(blocks, 0, bodyless=True, retries_bodyless=False).stuck == (0,)
    assert after_failed_block_request(blocks, 0, bodyless=True, retries_bodyless=True) == blocks
    # an error code sets the back-off and clears requestInFlight in every version (3.9.1's Scala, 4.x's Java)
    assert after_failed_block_request(blocks, 0, bodyless=False, retries_bodyless=False) == blocks
    stuck = after_failed_block_request(blocks, 3, bodyless=True, retries_bodyless=False)
    assert after_failed_block_request(stuck, 3, bodyless=True, retries_bodyless=False) == stuck


def _changed(vid: str, change: Callable[[dict[str, Any]], object], variant: str | None = None) -> str:
    v = copy.deepcopy(vectors_by_id(MORE24)[vid])
    change(v)
    return run_vector(v, variant).outcome


def _step(i: int, **fields: Any) -> Callable[[dict[str, Any]], None]:
    def change(v: dict[str, Any]) -> None:
        v["steps"][i]["input"].update(fields)
    return change


def test_the_metadata_comparisons_can_fail() -> None:
    for vid in TV2_ABORTS:
        # a TV0 transit with nothing added: completeTransitionTo throws
        assert _changed(vid, _step(0, client_transaction_version=0), "kafka-4.2") == harness.DISAGREE
        # a PrepareCommit is not taken from an ended state
        assert _changed(vid, _step(0, new_state="PrepareCommit"), "kafka-4.2") == harness.DISAGREE
        # a transition already pending
        assert _changed(vid, lambda v: v["initial_state"]["txn_metadata"].update(pending_state="Ongoing"),
                        "kafka-4.2") == harness.DISAGREE
    for vid in FENCES:
        # from Ongoing the fence goes through (epoch 32766 -> 32767)
        assert _changed(vid, lambda v: v["initial_state"]["txn_metadata"].update(state="Ongoing"),
                        "kafka-4.2") == harness.DISAGREE


def test_the_producer_id_comparisons_can_fail() -> None:
    for vid in PIDM:
        # an error code backs off and retries in 4.1.1 too
        assert _changed(vid, _step(1, event="block request fails with UNKNOWN_SERVER_ERROR"), "kafka-4.1.1") \
            == harness.AGREE
        # no grant: the last call still fails
        def no_grant(v: dict[str, Any]) -> None:
            del v["steps"][5]
        assert _changed(vid, no_grant, "kafka-4.2") == harness.DISAGREE


def test_the_partition_cache_comparisons_can_fail() -> None:
    for vid in TSM:
        # the other partition removed: b stays, a goes
        assert _changed(vid, _step(6, partition=1)) == harness.DISAGREE
        # the world's one partition unloaded (no 'partition'): the named partitions' entries stay, b is still read
        def unnamed(v: dict[str, Any]) -> None:
            del v["steps"][6]["input"]["partition"]
        assert _changed(vid, unnamed) == harness.DISAGREE
        # b put before its partition is loaded: NOT_COORDINATOR, nothing cached
        def early(v: dict[str, Any]) -> None:
            v["steps"].insert(0, v["steps"].pop(1))
        assert _changed(vid, early) == harness.DISAGREE
        # without the partition count no id can be placed on a partition
        assert _changed(vid, lambda v: v["initial_state"].pop("transaction_state_partitions")) \
            == harness.NOT_EXPRESSIBLE


def test_the_topic_deletion_comparisons_can_fail() -> None:
    for vid in TOPIC_DELETION:
        # bar-1 not deleted: grp-1 keeps it and writes no tombstone
        assert _changed(vid, _step(0, partitions=["foo-1", "foo-2", "foo-3"])) == harness.DISAGREE
        # grp-2's offsets committed instead of pending: the same tombstones, so they are not told apart ...
        def committed(v: dict[str, Any]) -> None:
            v["initial_state"]["groups"]["grp-2"] = {"committed": {"foo-1": 100, "foo-2": 200, "foo-3": 300}}
        assert _changed(vid, committed) == harness.AGREE
        # ... but a second open transaction of grp-2 on foo-1 gets its own tombstone
        def second(v: dict[str, Any]) -> None:
            v["initial_state"]["groups"]["grp-2"]["pending_txn_offsets"]["101"] = {"foo-1": 150}
        assert _changed(vid, second) == harness.DISAGREE
        # the classic coordinator's topic deletion is not modelled
        assert _changed(vid, lambda v: v["source"].update(file="core/src/test/scala/unit/kafka/coordinator/group/"
                                                                 "GroupMetadataManagerTest.scala")) \
            == harness.NOT_EXPRESSIBLE


def test_the_coverage_table_names_the_vectors() -> None:
    assert_coverage_table_names_vectors(MORE24)
