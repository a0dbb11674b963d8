"""Session 28's ``tests/data/kafka-unit-test-vectors.more27.json``: GroupMetadataManagerTest (the classic group
coordinator): transactional offset commits' metadata size, append errors and a moved coordinator, the load of the
__consumer_offsets partition and the coordinator epoch of its load and unload, with pending transactional offsets;
pinned per profile; comparisons that can fail; the rules on their own; a coverage row per GroupMetadataManagerTest
test."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
from conform_pins import assert_pinned, coverage_rows, outcome_totals, run_vector, vectors_by_id
from eoscheck.model.api import group as api
from eoscheck.model.api.protocol import PROFILE_TABLE, PROFILES, SWITCH_HISTORY, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.errors import Errors
from eoscheck.model.group.metadata import GroupState
from eoscheck.model.group.offsets_load import (
    COMMIT,
    EMPTY_CONTROL,
    GROUP,
    GROUP_TOMBSTONE,
    MARKER,
    TOMBSTONE,
    OffsetsLogRecord,
    coordinator_epoch_update,
    load_group,
)

MORE27 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more27.json"
ALL = tuple(f"BRK-GMM-{n}" for n in range(20, 42))
#: the vectors that read the coordinator epoch (KAFKA-10614, 3.0.0) and an empty control batch (KAFKA-7467, 2.0.1)
EPOCH = ("BRK-GMM-31", "BRK-GMM-32", "BRK-GMM-33", "BRK-GMM-34", "BRK-GMM-39")
EMPTY_CONTROL_BATCH = ("BRK-GMM-38", "BRK-GMM-41")
#: GroupMetadataManagerTest's test methods at 1eb7644 (the class is gone from 4.1.0 with the classic coordinator)
GMM_TESTS = (
    "testLogInfoFromCleanupGroupMetadata", "testLoadOffsetsWithoutGroup", "testLoadEmptyGroupWithOffsets",
    "testLoadTransactionalOffsetsWithoutGroup", "testDoNotLoadAbortedTransactionalOffsetCommits",
    "testGroupLoadedWithPendingCommits", "testLoadWithCommittedAndAbortedTransactionalOffsetCommits",
    "testLoadWithCommittedAndAbortedAndPendingTransactionalOffsetCommits",
    "testLoadTransactionalOffsetCommitsFromMultipleProducers",
    "testGroupLoadWithConsumerAndTransactionalOffsetCommitsConsumerWins",
    "testGroupLoadWithConsumerAndTransactionalOffsetCommitsTransactionWins", "testGroupNotExists",
    "testLoadOffsetsWithTombstones", "testLoadOffsetsAndGroup", "testLoadOffsetsAndGroupIgnored",
    "testUnloadOffsetsAndGroup", "testUnloadOffsetsAndGroupIgnored", "testUnloadOffsetsAndGroupIgnoredAfterStopReplica",
    "testLoadGroupWithTombstone", "testLoadGroupWithLargeGroupMetadataRecord", "testLoadGroupAndOffsetsWithCorruptedLog",
    "testOffsetWriteAfterGroupRemoved", "testLoadGroupAndOffsetsFromDifferentSegments", "testAddGroup",
    "testloadGroupWithStaticMember", "testLoadConsumerGroup", "testLoadEmptyConsumerGroup",
    "testLoadConsumerGroupWithFaultyConsumerProtocol", "testShouldThrowExceptionForUnsupportedGroupMetadataVersion",
    "testCurrentStateTimestampForAllGroupMetadataVersions", "testReadFromOldGroupMetadata", "testStoreEmptyGroup",
    "testStoreEmptySimpleGroup", "testStoreGroupErrorMapping", "testStoreNonEmptyGroup",
    "testStoreNonEmptyGroupWhenCoordinatorHasMoved", "testCommitOffset", "testTransactionalCommitOffsetCommitted",
    "testTransactionalCommitOffsetAppendFailure", "testTransactionalCommitOffsetAborted",
    "testCommitOffsetWhenCoordinatorHasMoved", "testCommitOffsetFailure", "testCommitOffsetPartialFailure",
    "testOffsetMetadataTooLarge", "testOffsetMetadataTooLargePartialFailure",
    "testTransactionalCommitOffsetWithOffsetMetadataTooLargePartialFailure", "testExpireOffset",
    "testGroupMetadataRemoval", "testGroupMetadataRemovalWithLogAppendTime", "testExpireGroupWithOffsetsOnly",
    "testOffsetExpirationSemantics", "testOffsetExpirationOfSimpleConsumer", "testOffsetExpirationOfActiveGroupSemantics",
    "testLoadOffsetFromOldCommit", "testLoadOffsetWithExplicitRetention", "testSerdeOffsetCommitValue",
    "testSerdeOffsetCommitValueWithExpireTimestamp", "testSerdeOffsetCommitValueWithNoneExpireTimestamp",
    "testSerializeGroupMetadataValueToHighestNonFlexibleVersion",
    "testSerializeOffsetCommitValueToHighestNonFlexibleVersion", "testDeserializeHighestSupportedGroupMetadataValueVersion",
    "testDeserializeHighestSupportedOffsetCommitValueVersion", "testDeserializeFutureOffsetCommitValue",
    "testDeserializeFutureGroupMetadataValue", "testLoadOffsetsWithEmptyControlBatch", "testMetrics",
    "testPartitionLoadMetric", "testReadMessageKeyCanReadUnknownMessage", "testLoadGroupsAndOffsetsWillIgnoreUnknownMessage",
)


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """The pin from the profile's switches: no coordinator epoch before KAFKA-10614 (3.0.0), an empty control batch
    fails the load before KAFKA-7467 (2.0.1); BRK-GMM-23's OffsetFetch asks require_stable, KIP-447's (2.5.0)."""
    p = protocol(name)
    disagree: dict[str, str] = {}
    inexpressible = {"BRK-GMM-23": "kip-447"} if "kip-447" in p.lacks else {}
    if not p.group_load_epoch_checked:
        disagree.update(dict.fromkeys(EPOCH, "no coordinator epoch: every load and unload runs"))
    if not p.empty_control_batch_ok:
        disagree.update(dict.fromkeys(EMPTY_CONTROL_BATCH, "the empty control batch fails the load"))
    return {v: w for v, w in disagree.items() if v not in inexpressible}, inexpressible


def test_the_pins_name_the_profiles_read() -> None:
    assert _derived("kafka-2024-10") == _derived("kafka-3.0-3.1.0") == _derived("kafka-4.2") == ({}, {})
    assert set(_derived("kafka-2.7-2.8")[0]) == set(_derived("kafka-2.0.1-2.3")[0]) == set(EPOCH)
    assert _derived("kafka-2.5")[1] == {} and _derived("kafka-2.4.1")[1] == {"BRK-GMM-23": "kip-447"}
    assert set(_derived("kafka-2.0.0")[0]) == set(EPOCH) | set(EMPTY_CONTROL_BATCH)
    assert SWITCH_HISTORY["group_load_epoch_checked"] == (((2, 0, 0), False), ((3, 0, 0), True))
    assert SWITCH_HISTORY["empty_control_batch_ok"] == (((2, 0, 0), False), ((2, 0, 1), True))


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more27_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE27), name, disagree, inexpressible)


def test_the_default_run_agrees() -> None:
    run = harness.run_file(load_vectors(MORE27))
    assert outcome_totals(run) == {"agree": 22, "disagree": 0, "not expressible": 0}
    assert {v.variant for v in run.vectors} == {"kafka-2024-10"} and {v.id for v in run.vectors} == set(ALL)
    got = {n: tuple(outcome_totals(harness.run_file(load_vectors(MORE27), n)).values()) for n in PROFILE_TABLE}
    assert {t for n, t in got.items() if protocol(n).group_load_epoch_checked} == {(22, 0, 0)}
    assert got["kafka-2.7-2.8"] == (17, 5, 0) and got["kafka-2.4.1"] == (16, 5, 1) and got["kafka-2.0.0"] == (14, 7, 1)


def _changed(vid: str, step: int, field: str, value: object) -> harness.VectorReport:
    vector = copy.deepcopy(vectors_by_id(MORE27)[vid])
    vector["steps"][step]["expected"][field] = value
    return run_vector(vector)


@pytest.mark.parametrize(("vid", "step", "field", "value"), [
    ("BRK-GMM-20", 0, "per_partition", {"foo-1": {"error": "NONE"}}),  # the oversized partition is refused
    ("BRK-GMM-20", 0, "pending_partitions", ["foo-0", "foo-1"]),  # and not left pending
    ("BRK-GMM-20", 1, "committed_partitions", ["foo-0", "foo-1"]),
    ("BRK-GMM-21", 3, "per_partition", {"foo-0": {"error": "COORDINATOR_NOT_AVAILABLE"}}),  # NOT_LEADER_OR_FOLLOWER
    ("BRK-GMM-21", 6, "per_partition", {"foo-0": {"error_code": 4}}),  # INVALID_FETCH_SIZE is mapped
    ("BRK-GMM-21", 7, "per_partition", {"foo-0": {"error": "COORDINATOR_NOT_AVAILABLE"}}),  # CORRUPT_MESSAGE passes
    ("BRK-GMM-22", 0, "pending_partitions", ["foo-0"]),
    ("BRK-GMM-23", 1, "per_partition", {"foo-0": {"error": "UNSTABLE_OFFSET_COMMIT"}}),
    ("BRK-GMM-25", 0, "per_partition", {"foo-0": {"error": "NONE"}}),
    ("BRK-GMM-29", 0, "committed_partitions", ["bar-0", "foo-0", "foo-1"]),
    ("BRK-GMM-31", 2, "loaded", True),
    ("BRK-GMM-31", 2, "coordinator_epoch", 1),
    ("BRK-GMM-33", 1, "group_loaded", False),
    ("BRK-GMM-34", 1, "coordinator_epoch", None),  # a StopReplica leaves the epoch
    ("BRK-GMM-35", 0, "group_loaded", True),
    ("BRK-GMM-36", 0, "group_state", "Stable"),  # the group tombstone forgot the record
    ("BRK-GMM-37", 0, "members", ["a"]),
    ("BRK-GMM-39", 1, "pending_partitions", []),  # the stale unload is ignored
    ("BRK-GMM-39", 3, "committed_partitions", []),  # the reload replays the marker
    ("BRK-GMM-40", 0, "pending_partitions", []),  # a plain tombstone leaves the open transaction's offset
    ("BRK-GMM-41", 0, "pending_partitions", []),  # an empty control batch ends nothing
    ("BRK-GMM-41", 1, "pending_partitions", ["foo-0"]),
])
def test_the_vectors_compare_what_they_claim(vid: str, step: int, field: str, value: object) -> None:
    assert _changed(vid, step, field, value).outcome == harness.DISAGREE


def test_the_new_coordinators_load_is_not_the_classic_one() -> None:
    vector: dict[str, Any] = copy.deepcopy(vectors_by_id(MORE27)["BRK-GMM-31"])
    vector["source"]["file"] = "group-coordinator/src/test/java/org/apache/kafka/coordinator/group/GroupMetadataManagerTest.java"
    report = run_vector(vector)
    assert report.outcome == harness.NOT_EXPRESSIBLE and "CoordinatorRuntime" in report.reason


def test_the_coordinator_epoch_rule() -> None:
    # (recorded epoch, step's epoch) -> (runs, recorded after); None: an unload without an epoch
    table = {(None, 2): (True, 2), (2, 2): (True, 2), (2, 3): (True, 3), (2, 1): (False, 2),
             (2, None): (True, 2), (None, None): (True, None)}
    for (current, epoch), want in table.items():
        assert coordinator_epoch_update(current, epoch, checked=True) == want, (current, epoch)
        assert coordinator_epoch_update(current, epoch, checked=False) == (True, None)


def _r(kind: str, at: int, **kw: Any) -> OffsetsLogRecord:
    return OffsetsLogRecord(kind, at, **kw)


def test_the_classic_load_rules() -> None:
    txn = _r(COMMIT, 0, partition=0, offset=23, producer_id=7)
    # pending only: an Empty group at generation 0
    g = load_group((txn,), 2)
    assert g is not None and g.state == GroupState.EMPTY and [e.offset for e in g.pending] == [23]
    # aborted: nothing left, the group is not loaded
    assert load_group((txn, _r(MARKER, 1, producer_id=7, is_commit=False)), 2) is None
    # log order: a plain commit written after the transactional one wins at COMMIT
    g = load_group((txn, _r(COMMIT, 1, partition=0, offset=24), _r(MARKER, 2, producer_id=7)), 2)
    assert g is not None and g.offsets[0].offset == 24 and not g.pending
    # a transactional tombstone removes that producer's pending offset only; a plain one the committed offset only
    g = load_group((txn, _r(COMMIT, 1, partition=0, offset=5), _r(TOMBSTONE, 2, partition=0)), 2)
    assert g is not None and g.offsets[0].offset == -1 and [e.offset for e in g.pending] == [23]
    assert load_group((txn, _r(TOMBSTONE, 1, partition=0, producer_id=7)), 2) is None
    # an empty control batch: skipped, or (2.0.0) the load fails
    assert load_group((txn, _r(EMPTY_CONTROL, 1, producer_id=7)), 2) == load_group((txn,), 2)
    assert load_group((txn, _r(EMPTY_CONTROL, 1, producer_id=7)), 2, empty_control_batch_ok=False) is None
    # a group record and its tombstone
    member = _r(GROUP, 0, generation=3, members=(1,))
    g = load_group((member,), 1)
    assert g is not None and (g.state, g.generation_id, g.members) == (GroupState.STABLE, 3, (1,))
    assert load_group((member, _r(GROUP_TOMBSTONE, 1)), 1) is None


def test_a_group_still_cached_is_kept_and_an_unload_drops_it() -> None:
    p = protocol("kafka-2024-10")
    log = (_r(COMMIT, 0, partition=0, offset=23, producer_id=7),)
    state = api.GroupCoordinatorState(None, 1)
    ran, part, state = api.handle_load_offsets_partition(state, api.OffsetsPartition(None, log), 2, p)
    assert ran and part.epoch == 2 and state.group is not None and state.log_end_offset == 1
    cached = state
    ran, part, state = api.handle_load_offsets_partition(state, part._replace(log=()), 3, p)
    assert ran and part.epoch == 3 and state == cached  # addGroup is putIfAbsent
    ran, part, state = api.handle_unload_offsets_partition(state, part, 2, p)
    assert not ran and state == cached
    ran, part, state = api.handle_unload_offsets_partition(state, part, None, p)
    assert ran and part.epoch == 3 and state.group is None


def test_a_moved_coordinator_answers_every_partition_not_coordinator() -> None:
    state = api.GroupCoordinatorState(None, 2)
    req = api.TxnOffsetCommitRequest(7, 0, -1, ((0, 5), (1, 6)))
    p = protocol("kafka-2024-10")
    errors, after = api.txn_offset_commit_errors(state, req, p, offsets_partition_local=False,
                                                 oversized=frozenset({1}))
    assert errors == ((0, Errors.NOT_COORDINATOR), (1, Errors.NOT_COORDINATOR)) and after == state
    # every partition oversized: OFFSET_METADATA_TOO_LARGE comes first (storeOffsets returns before getMagic)
    errors, _ = api.txn_offset_commit_errors(state, req, p, offsets_partition_local=False, oversized=frozenset({0, 1}))
    assert {e for _, e in errors} == {Errors.OFFSET_METADATA_TOO_LARGE}


def test_every_group_metadata_manager_test_has_one_row() -> None:
    rows = coverage_rows("GroupMetadataManagerTest")
    assert set(rows) == set(GMM_TESTS) and len(GMM_TESTS) == 69
    vectors = {**vectors_by_id(MORE27), **vectors_by_id(MORE27.with_name("kafka-unit-test-vectors.broker.json")),
               # session 29 (conf29a): the classic offset retention's two tests
               **vectors_by_id(MORE27.with_name("kafka-unit-test-vectors.more32.json"))}
    cited: set[str] = set()
    for test, row in rows.items():
        mechanism, cell = row.rstrip(" |").split(" | ", 1)
        assert mechanism == "txn_offset_commit", test
        covered = not cell.startswith("not covered: ")
        tail = cell.rsplit(": ", 1)[-1]
        assert not covered or re.fullmatch(r"BRK-GMM-\d+(, BRK-GMM-\d+)*", tail), test
        ids = tail.split(", ") if covered else []
        for vid in ids:
            assert vectors[vid]["source"]["test"].split(" ")[0] == test, (test, vid)
        cited.update(ids)
    assert cited == set(ALL[:19]) | {f"BRK-GMM-{n:02d}" for n in range(1, 12)} | {"BRK-GMM-42", "BRK-GMM-52"}
