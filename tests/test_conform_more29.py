"""Session 28's ``tests/data/kafka-unit-test-vectors.more29.json``: KafkaApisTest's TxnOffsetCommit passed to the group
coordinator and WriteTxnMarkers with a refused and an appended partition, GroupCoordinatorTest's LeaveGroup of static
members (and the rule before 3.0.0, ``Protocol.leave_group``) with the TxnOffsetCommit that follows, and
OffsetMetadataManagerTest's unknown instance id; pinned per profile; comparisons that can fail; the LeaveGroup rule
on its own; one coverage row per test this file's session added."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from conform_pins import assert_pinned, coverage_rows, outcome_totals, run_vector, vectors_by_id
from eoscheck.model.api.protocol import FEATURE_SINCE, PROFILE_TABLE, PROFILES, SWITCH_HISTORY, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.errors import Errors
from eoscheck.model.group.leave_group import LeavingMember, leave_group
from eoscheck.model.group.metadata import GroupMeta, GroupState, new_group

MORE29 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more29.json"
KA, MARKERS = "BRK-KA-60", ("BRK-KA-61", "BRK-KA-62")
#: LeaveGroup vectors; GC-22 is the 3.0.0 rule, GC-23 2.8.2's
LEAVES = tuple(f"BRK-GC-{n}" for n in range(20, 31))
OMM = "BRK-OMM-60"
ALL = (KA, *MARKERS, *LEAVES, OMM)
#: the features each vector needs, in step order (the first one a profile lacks is the reason it names): KAFKA-8221's
#: LeaveGroup of several members or by instance id (2.4.0), KIP-447's TxnOffsetCommit with group metadata (2.5.0)
NEEDS: dict[str, tuple[str, ...]] = {
    KA: ("kip-447",), OMM: ("kip-447",), "BRK-GC-27": ("kip-447",),
    **dict.fromkeys(("BRK-GC-20", "BRK-GC-21", "BRK-GC-22", "BRK-GC-23", "BRK-GC-30"), ("kafka-8221", "kip-447")),
    **dict.fromkeys(("BRK-GC-26", "BRK-GC-28", "BRK-GC-29"), ("kafka-8221",)),
}


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """The pin from the profile's switches: a vector needing a feature the profile lacks is not expressible; 2.5.0 ..
    2.8.2 remove a member naming an unknown instance id ("2.4" rule) and do not check a TxnOffsetCommit's unknown
    instance id (``txn_offset_commit`` "2.5")."""
    p = protocol(name)
    inexpressible = {v: next(f for f in needs if f in p.lacks) for v, needs in NEEDS.items()
                     if any(f in p.lacks for f in needs)}
    if inexpressible:
        return {}, inexpressible
    disagree = {}
    if p.leave_group == "2.4":
        disagree["BRK-GC-22"] = "a member in the group leaves whatever unknown instance id it names (2.4.0 .. 2.8.2)"
    else:
        disagree["BRK-GC-23"] = "an unknown instance id is UNKNOWN_MEMBER_ID and the member stays (3.0.0 on)"
    if p.txn_offset_commit == "2.5":
        disagree[OMM] = "doTxnCommitOffsets checks no unknown instance id: ILLEGAL_GENERATION"
    return disagree, {}


def test_the_pins_name_the_profiles_read() -> None:
    assert _derived("kafka-2.0.0")[1]["BRK-GC-21"] == "kafka-8221" == _derived("kafka-2.0.1-2.3")[1]["BRK-GC-20"]
    assert _derived("kafka-2.0.0")[1]["BRK-GC-27"] == "kip-447" and len(_derived("kafka-2.0.0")[1]) == 11
    assert set(_derived("kafka-2.4.0")[1]) == set(_derived("kafka-2.4.1")[1]) == {
        KA, OMM, "BRK-GC-20", "BRK-GC-21", "BRK-GC-22", "BRK-GC-23", "BRK-GC-27", "BRK-GC-30"}
    for name in ("kafka-2.5", "kafka-2.6", "kafka-2.7-2.8"):
        assert set(_derived(name)[0]) == {"BRK-GC-22", OMM}, name
    for name in ("kafka-3.0-3.1.0", "kafka-2024-10", "kafka-4.0.0", "kafka-4.2", "kafka-later-trunk"):
        assert set(_derived(name)[0]) == {"BRK-GC-23"}, name
    assert SWITCH_HISTORY["leave_group"] == (((2, 0, 0), "2.4"), ((3, 0, 0), "3.0"))
    assert FEATURE_SINCE["kafka-8221"].first == (2, 4, 0)


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more29_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE29), name, disagree, inexpressible)


def test_the_default_run_judges_each_vector_under_its_tag_and_agrees() -> None:
    run = harness.run_file(load_vectors(MORE29))
    assert outcome_totals(run) == {"agree": 15, "disagree": 0, "not expressible": 0}
    variants = {v.id: v.variant for v in run.vectors}
    assert variants["BRK-GC-23"] == "kafka-2.7-2.8"
    assert {variants[v] for v in ALL if v != "BRK-GC-23"} == {"kafka-2024-10"}
    got = {n: tuple(outcome_totals(harness.run_file(load_vectors(MORE29), n)).values()) for n in PROFILE_TABLE}
    assert got["kafka-2.0.0"] == (4, 0, 11) and got["kafka-2.4.1"] == (7, 0, 8)
    assert got["kafka-2.5"] == (13, 2, 0) and got["kafka-3.0-3.1.0"] == got["kafka-4.2"] == (14, 1, 0)


def _changed(vid: str, step: int, field: str, value: object) -> harness.VectorReport:
    vector = copy.deepcopy(vectors_by_id(MORE29)[vid])
    vector["steps"][step]["expected"][field] = value
    return run_vector(vector)


def test_the_vectors_compare_what_they_claim() -> None:
    assert _changed(KA, 0, "pending_txn", {"20": {"foo-0": 11}}).outcome == harness.DISAGREE
    assert _changed(KA, 0, "coordinator_called", False).outcome == harness.DISAGREE
    assert _changed(KA, 0, "per_partition", {"foo-0": {"error": "ILLEGAL_GENERATION"}}).outcome == harness.DISAGREE
    for vid in MARKERS:
        assert _changed(vid, 0, "per_partition", {"t1-0": {"error": "UNKNOWN_TOPIC_OR_PARTITION"}}).outcome \
            == harness.DISAGREE
        assert _changed(vid, 0, "appended", False).outcome == harness.DISAGREE
    assert _changed("BRK-GC-20", 0, "member_errors", {"leader-instance": "NONE"}).outcome == harness.DISAGREE
    assert _changed("BRK-GC-20", 0, "members", []).outcome == harness.DISAGREE
    assert _changed("BRK-GC-21", 0, "member_errors", {"leader-instance": "FENCED_INSTANCE_ID"}).outcome == harness.DISAGREE
    assert _changed("BRK-GC-21", 0, "state", "STABLE").outcome == harness.DISAGREE
    assert _changed("BRK-GC-21", 0, "static_members", ["follower-instance:follower-id",
                                                       "leader-instance:leader-id"]).outcome == harness.DISAGREE
    assert _changed("BRK-GC-21", 2, "per_partition", {"topic-0": {"error": "NONE"}}).outcome == harness.DISAGREE
    assert _changed(OMM, 0, "error", "ILLEGAL_GENERATION").outcome == harness.DISAGREE
    assert _changed("BRK-GC-24", 0, "member_errors", {"consumerId": "NONE"}).outcome == harness.DISAGREE
    assert _changed("BRK-GC-25", 0, "error", "NONE").outcome == harness.DISAGREE
    assert _changed("BRK-GC-27", 0, "generation", 1).outcome == harness.DISAGREE
    assert _changed("BRK-GC-27", 0, "state", "PREPARING_REBALANCE").outcome == harness.DISAGREE
    assert _changed("BRK-GC-27", 1, "per_partition", {"topic-0": {"error": "NONE"}}).outcome == harness.DISAGREE
    assert _changed("BRK-GC-28", 0, "static_members", ["leader-instance:leader-id"]).outcome == harness.DISAGREE
    assert _changed("BRK-GC-30", 0, "member_errors", {"unknown-instance": "NONE"}).outcome == harness.DISAGREE


def test_the_kafka_apis_txn_offset_commit_reads_the_group_metadata() -> None:
    """Before session 28 the fields the coordinator read of a request passed through KafkaApis' metadata check were
    listed as unread; now only those no model function takes are."""
    (report,) = harness.run_file(load_vectors(MORE29)).vectors[:1]
    unread = {f for s in report.steps for f in s.unchecked if f.startswith("input.")}
    assert unread == {"input.group_id", "input.producer_epoch", "input.transactional_id"}


def _group(*, statics: dict[int, int], members: tuple[int, ...] = (), state: GroupState = GroupState.STABLE) -> GroupMeta:
    g = new_group(1)
    return g._replace(state=int(state), generation_id=1, members=tuple(sorted(set(members) | set(statics.values()))),
                      static_members=tuple(sorted(statics.items())))


@pytest.mark.parametrize("rule", ["2.4", "3.0"])
def test_leave_group_by_instance_fences_or_removes(rule: str) -> None:
    g = _group(statics={7: 1, 8: 2})
    r = leave_group(g, (LeavingMember(0, 7), LeavingMember(99, 8)), rule=rule)  # type: ignore[arg-type]
    assert (r.error, r.member_errors) == (Errors.NONE, (Errors.NONE, Errors.FENCED_INSTANCE_ID))
    assert r.group.members == (2,) and r.group.static_members == ((8, 2),)
    assert r.group.state == GroupState.PREPARING_REBALANCE and r.group.generation_id == 1
    # an unknown instance id with an empty member id, and an unknown member id: nothing leaves
    r = leave_group(g, (LeavingMember(0, 9), LeavingMember(99)), rule=rule)  # type: ignore[arg-type]
    assert r.member_errors == (Errors.UNKNOWN_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID) and r.group == g


def test_the_rules_differ_on_an_unknown_instance_id_of_a_member() -> None:
    g = _group(statics={}, members=(1, 2))
    new = leave_group(g, (LeavingMember(1, 9),), rule="3.0")
    old = leave_group(g, (LeavingMember(1, 9),), rule="2.4")
    assert new.member_errors == (Errors.UNKNOWN_MEMBER_ID,) and new.group == g
    assert old.member_errors == (Errors.NONE,) and old.group.members == (2,)
    # as from 3.0.0: another member id with a known instance id is fenced, its own member id removes it
    s = _group(statics={7: 1})
    assert leave_group(s, (LeavingMember(99, 7),), rule="2.4").member_errors == (Errors.FENCED_INSTANCE_ID,)
    assert leave_group(s, (LeavingMember(1, 7),), rule="2.4").group.members == ()


def test_the_rules_differ_only_for_a_member_naming_an_unknown_instance_id() -> None:
    g = _group(statics={7: 1}, members=(2,))
    differ = {(m, i) for m in (0, 1, 2, 99) for i in (-1, 7, 9)
              if leave_group(g, (LeavingMember(m, i),), rule="2.4") != leave_group(g, (LeavingMember(m, i),), rule="3.0")}
    assert differ == {(1, 9), (2, 9)}


def test_the_last_member_leaving_completes_the_join_and_others_wait() -> None:
    """With no member left every member has joined: Empty at the next generation, the assignment cleared; with one
    left the group waits in PreparingRebalance at its generation."""
    g = _group(statics={}, members=(1, 2))._replace(assignment=(1,))
    one = leave_group(g, (LeavingMember(1),), rule="3.0").group
    assert (one.state, one.generation_id, one.members) == (GroupState.PREPARING_REBALANCE, 1, (2,))
    both = leave_group(g, (LeavingMember(1), LeavingMember(2)), rule="3.0").group
    assert (both.state, both.generation_id, both.members, both.assignment) == (GroupState.EMPTY, 2, (), (0,))


def test_a_dead_group_answers_for_the_whole_request_and_a_rule_is_named() -> None:
    g = _group(statics={7: 1}, state=GroupState.DEAD)
    r = leave_group(g, (LeavingMember(1, 7),), rule="3.0")
    assert (r.error, r.member_errors, r.group) == (Errors.COORDINATOR_NOT_AVAILABLE, (), g)
    with pytest.raises(ValueError):
        leave_group(g, (), rule="2.9")  # type: ignore[arg-type]


#: the tests session 28 (conf28c) gave a row, by class
NEW_ROWS: dict[str, tuple[str, ...]] = {
    "KafkaApisTest": (
        "testHandleTxnOffsetCommitRequest", "testHandleAddPartitionsToTxnAuthorizationFailedAndMetrics",
        "testDescribeProducers", "testProduceResponseContainsNewLeaderOnNotLeaderOrFollower",
        "testProduceResponseReplicaManagerLookupErrorOnNotLeaderOrFollower",
        "testProduceResponseMetadataLookupErrorOnNotLeaderOrFollower", "testReadCommittedConsumerListOffsetLatest",
        "testHandleOffsetFetchWithMultipleGroups", "testHandleOffsetFetchWithSingleGroup",
        "testHandleOffsetFetchAllOffsetsWithSingleGroup", "testHandleOffsetFetchAuthorization",
        "testHandleOffsetFetchWithUnauthorizedTopicAndTopLevelError", "testHandleOffsetCommitRequest",
        "testHandleOffsetCommitRequestFutureFailed", "testHandleOffsetCommitRequestTopicsAndPartitionsValidation",
        "testOffsetCommitWithInvalidPartition", "testFindCoordinatorAutoTopicCreationForTxnTopic",
        "testFindCoordinatorNotEnoughBrokersForTxnTopic", "testOldFindCoordinatorAutoTopicCreationForTxnTopic",
        "testOldFindCoordinatorNotEnoughBrokersForTxnTopic", "testMetadataAutoTopicCreationForTxnTopic",
        "testMetadataAutoTopicCreationDisabledForTxnTopic",
        "shouldRespondWithUnknownTopicOrPartitionForBadPartitionAndNoErrorsForGoodPartition",
        "shouldRespondWithUnsupportedMessageFormatForBadPartitionAndNoErrorsForGoodPartition",
        "requiredAclsNotPresentWriteTxnMarkersThrowsAuthorizationException",
        "shouldResignCoordinatorsIfStopReplicaReceivedWithDeleteFlagAndLeaderEpoch",
        "shouldResignCoordinatorsIfStopReplicaReceivedWithDeleteFlagAndDeleteSentinel",
        "shouldResignCoordinatorsIfStopReplicaReceivedWithDeleteFlagAndNoEpochSentinel",
        "shouldNotResignCoordinatorsIfStopReplicaReceivedWithoutDeleteFlag",
        "testDescribeTransactions", "testDescribeTransactionsFiltersUnauthorizedTopics",
        "testListTransactionsErrorResponse", "testListTransactionsAuthorization",
    ),
    "GroupCoordinatorTest": (
        "testJoinGroupCompletionWhenPendingMemberJoins", "testJoinGroupCompletionWhenPendingMemberTimesOut",
        "testPendingMembersLeavesGroup", "testLeaveGroupWithFencedInstanceId",
        "testStaticMembersFencedInstanceBatchLeaveGroup", "testPendingMemberBatchLeaveGroup",
        "testLeaveGroupWrongCoordinator", "testLeaveGroupUnknownGroup", "testLeaveGroupUnknownConsumerExistingGroup",
        "testSingleLeaveDeadGroup", "testBatchLeaveDeadGroup", "testValidLeaveGroup",
        "testLeaveGroupStaticMemberWithUnknownMemberId", "testStaticMembersValidBatchLeaveGroup",
        "testStaticMembersWrongCoordinatorBatchLeaveGroup", "testStaticMembersUnknownGroupBatchLeaveGroup",
        "testStaticMembersUnknownInstanceBatchLeaveGroup",
    ),
    "GroupMetadataTest": (
        "testOffsetCommitFailureWithAnotherPending", "testOffsetCommitWithAnotherPending",
        "testCannotAddPendingMemberIfStable", "testRemovalFromPendingAfterMemberIsStable",
        "testRemovalFromPendingWhenMemberIsRemoved", "testCannotAddStaticMemberIfAlreadyPresent",
        "testCannotAddPendingSyncOfUnknownMember", "testCannotRemovePendingSyncOfUnknownMember",
        "testCanAddAndRemovePendingSyncMember", "testRemovalFromPendingSyncWhenMemberIsRemoved",
        "testNewGenerationClearsPendingSyncMembers",
    ),
    "OffsetMetadataManagerTest": (
        "testGenericGroupOffsetCommitWithFencedInstanceId", "testConsumerGroupOffsetCommitWithStaleMemberEpoch",
        "testConsumerGroupOffsetFetchWithMemberIdAndEpoch", "testConsumerGroupOffsetFetchWithStaleMemberEpoch",
    ),
}


@pytest.mark.parametrize("cls", list(NEW_ROWS))
def test_every_test_of_this_session_has_one_row_citing_a_vector_or_a_reason(cls: str) -> None:
    rows = coverage_rows(cls)
    # session 29 (conf29a) covered two of these rows, KafkaApis' authorization, by more32's vectors
    vectors = {**vectors_by_id(MORE29), **vectors_by_id(MORE29.with_name("kafka-unit-test-vectors.more32.json"))}
    cited: set[str] = set()
    for test in NEW_ROWS[cls]:
        assert test in rows, (cls, test)
        cell = rows[test].rstrip(" |").split(" | ", 1)[1]
        ids = set(re.findall(r"\b(?:BRK-(?:KA|GC|OMM)-\d+)\b", cell)) & set(vectors)
        if "not covered: " in cell:
            continue  # a vector it names is a counterpart, not its coverage
        assert ids, (cls, test, cell)
        for vid in ids:
            assert vectors[vid]["source"]["test"] == test or vectors[vid]["source"]["test"].startswith("(no test"), vid
        cited |= ids
    if cls == "KafkaApisTest":
        assert cited == {KA, *MARKERS, "BRK-KA-63", "BRK-KA-64", "BRK-KA-67"}
    if cls == "GroupCoordinatorTest":
        assert cited == set(LEAVES)
    if cls == "OffsetMetadataManagerTest":
        assert cited == {OMM}
