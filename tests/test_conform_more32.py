"""Session 29's ``tests/data/kafka-unit-test-vectors.more32.json`` (conf29a): the classic group coordinator's offset
retention with pending transactional offsets, before and after KIP-211 (KAFKA-4682, 2.1.0, which split the profile
``kafka-2.0.1-2.3`` into ``kafka-2.0.1`` and ``kafka-2.1-2.3``) and with KIP-496's branch (2.4.0); pinned per profile;
comparisons that can fail; the rule on its own; the coverage rows."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from conform_pins import assert_pinned, outcome_totals, run_vector, vectors_by_id
from eoscheck.model.api import kafka_apis as ka
from eoscheck.model.api.protocol import (
    PROFILE_TABLE,
    PROFILES,
    SWITCH_HISTORY,
    history_value,
    profile_for_tag,
    protocol,
)
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.errors import Errors
from eoscheck.model.group import classic_offset_expiry as ce
from eoscheck.model.group.metadata import CommittedOffset, GroupMeta, GroupState, PendingTxnOffset, new_group

MORE32 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more32.json"
DOCS = Path(__file__).parent.parent / "docs" / "conformance.md"
#: the vectors whose expected answers are KIP-211's (2.1.0 on), those read at 2.0.1, and the one read at 2.4.0 (KIP-496)
KIP_211 = ("BRK-GMM-42", "BRK-GMM-43", "BRK-GMM-44", "BRK-GMM-46", "BRK-GMM-48", "BRK-GMM-51")
PRE_211 = ("BRK-GMM-45", "BRK-GMM-47", "BRK-GMM-49")
KIP_496 = ("BRK-GMM-50", "BRK-GMM-52")
#: the ones whose answer is the same under both rules (a simple consumer; an offset long expired either way)
BOTH = ("BRK-GMM-42", "BRK-GMM-43", "BRK-GMM-51")
#: KafkaApis' authorization: AddPartitionsToTxn v3 (needs KIP-588's v2+), its broker's verify-only v4 (KIP-890 part 1),
#: two v0 requests read at 2.0.1; WriteTxnMarkers refused, allowed by ALTER alone (KAFKA-16513, 3.8.0), by CLUSTER_ACTION
AUTHZ = ("BRK-KA-63", "BRK-KA-64", "BRK-KA-65", "BRK-KA-66", "BRK-KA-67", "BRK-KA-68", "BRK-KA-69")
ALL = tuple(sorted(KIP_211 + PRE_211 + KIP_496 + AUTHZ))


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    if p.classic_offset_retention == "expire-timestamp":
        disagree = {v: "before KIP-211 each offset expires at its own expire timestamp"
                    for v in KIP_211 + KIP_496 if v not in BOTH}
    else:
        disagree = {v: "KIP-211 expires by group state and current-state timestamp" for v in PRE_211}
        if "kip-496" in p.lacks:
            disagree.update(dict.fromkeys(KIP_496, "before KIP-496 a Stable group's offsets do not expire"))
    if not p.write_txn_markers_alter_cluster:
        disagree["BRK-KA-68"] = "before KAFKA-16513 ALTER on the cluster does not authorize WriteTxnMarkers"
    inexpressible: dict[str, str] = {}
    if "kip-588" in p.lacks:
        inexpressible = dict.fromkeys(("BRK-KA-63", "BRK-KA-64"), "kip-588")
    elif "kip-890-verification" in p.lacks:
        inexpressible = {"BRK-KA-64": "kip-890-verification"}
    return disagree, inexpressible


def test_the_pins_name_the_profiles_read() -> None:
    assert set(_derived("kafka-2.0.1")[0]) == {"BRK-GMM-44", "BRK-GMM-46", "BRK-GMM-48", "BRK-GMM-50", "BRK-GMM-52",
                                                "BRK-KA-68"}
    assert _derived("kafka-2.0.0") == _derived("kafka-2.0.1") == _derived("kafka-2.0.1-2.3")
    assert set(_derived("kafka-2.1-2.3")[0]) == set(PRE_211 + KIP_496 + ("BRK-KA-68",))
    assert set(_derived("kafka-2.4.0")[0]) == set(PRE_211 + ("BRK-KA-68",)) == set(_derived("kafka-3.7")[0])
    assert set(_derived("kafka-3.8-3.9")[0]) == set(PRE_211) == set(_derived("kafka-later-trunk")[0])
    assert _derived("kafka-2.7-2.8")[1] == {"BRK-KA-64": "kip-890-verification"} and _derived("kafka-3.6")[1] == {}
    assert _derived("kafka-2.6")[1] == {"BRK-KA-63": "kip-588", "BRK-KA-64": "kip-588"}


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more32_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE32), name, disagree, inexpressible)


def test_the_default_run_judges_each_vector_under_its_tag_and_agrees() -> None:
    run = harness.run_file(load_vectors(MORE32))
    assert {v.id for v in run.vectors} == set(ALL)
    assert outcome_totals(run) == {"agree": 18, "disagree": 0, "not expressible": 0}
    variants = {v.id: v.variant for v in run.vectors}
    assert {variants[v] for v in PRE_211} == {"kafka-2.0.1"}
    assert {variants[v] for v in ("BRK-GMM-43", "BRK-GMM-44", "BRK-GMM-46", "BRK-GMM-48", "BRK-GMM-51")} \
        == {"kafka-2.1-2.3"}
    assert variants["BRK-GMM-50"] == "kafka-2.4.0"
    assert variants["BRK-GMM-42"] == variants["BRK-GMM-52"] == "kafka-2024-10"
    got = {n: tuple(outcome_totals(harness.run_file(load_vectors(MORE32), n)).values()) for n in PROFILE_TABLE}
    assert got["kafka-2.0.1"] == got["kafka-2.0.0"] == got["kafka-2.1-2.3"] == (10, 6, 2)
    assert got["kafka-2.4.0"] == got["kafka-2.6"] == (12, 4, 2)
    assert got["kafka-2.7-2.8"] == got["kafka-3.3-3.5"] == (13, 4, 1)
    assert got["kafka-3.6"] == got["kafka-3.7"] == (14, 4, 0)
    assert {n for n, t in got.items() if t == (15, 3, 0)} == {"kafka-3.8-3.9", "kafka-2024-10", "kafka-4.0.0",
                                                              "kafka-4.0.1", "kafka-4.1.0", "kafka-4.1.1", "kafka-4.2",
                                                              "kafka-later-trunk"}


def test_the_split_is_a_typed_switch_with_its_history() -> None:
    assert SWITCH_HISTORY["classic_offset_retention"] == (((2, 0, 0), "expire-timestamp"), ((2, 1, 0), "kip-211"))
    assert set(dict(SWITCH_HISTORY["classic_offset_retention"]).values()) == set(ce.CLASSIC_RETENTION_RULES)
    assert history_value("classic_offset_retention", (2, 0, 1)) == "expire-timestamp"
    assert profile_for_tag("2.0.1") == "kafka-2.0.1" and profile_for_tag("2.1.0") == profile_for_tag("2.3.1") \
        == "kafka-2.1-2.3"
    # the old name keeps exactly the switches it had: 2.0.1's
    assert protocol("kafka-2.0.1-2.3") == protocol("kafka-2.0.1")
    assert protocol("kafka-2.1-2.3")._replace(name="", lacks=frozenset(), classic_offset_retention="kip-211") \
        == protocol("kafka-2.0.1")._replace(name="", lacks=frozenset(), classic_offset_retention="kip-211")
    assert protocol("kafka-2.1-2.3").lacks ^ protocol("kafka-2.0.1").lacks == {"kip-91"}


def _changed(vid: str, step: int, field: str, value: object) -> str:
    vector = copy.deepcopy(vectors_by_id(MORE32)[vid])
    vector["steps"][step]["expected"][field] = value
    return run_vector(vector, profile_for_tag(vector["source"].get("tag", "")) or None).outcome


def test_the_vectors_compare_what_they_claim() -> None:
    # the simple consumer's offset a millisecond early, and its group without the generation-0 tombstone
    assert _changed("BRK-GMM-42", 1, "expired", ["foo-0"]) == harness.DISAGREE
    assert _changed("BRK-GMM-42", 3, "group_tombstone", True) == harness.DISAGREE
    # the pending transactional offset keeps the group; the abort lets it die, with its tombstone
    assert _changed("BRK-GMM-43", 1, "state", "DEAD") == harness.DISAGREE
    assert _changed("BRK-GMM-43", 1, "pending_txn", {}) == harness.DISAGREE
    assert _changed("BRK-GMM-43", 3, "group_tombstone", False) == harness.DISAGREE
    assert _changed("BRK-GMM-44", 1, "expired", ["foo-0", "foo-1"]) == harness.DISAGREE
    assert _changed("BRK-GMM-45", 1, "expired", []) == harness.DISAGREE
    # KIP-211's >= and 2.0.x's strict <; the committed transaction's offset expires with its Empty group
    assert _changed("BRK-GMM-46", 1, "expired", []) == harness.DISAGREE
    assert _changed("BRK-GMM-46", 3, "state", "EMPTY") == harness.DISAGREE
    assert _changed("BRK-GMM-47", 1, "expired", ["foo-0"]) == harness.DISAGREE
    assert _changed("BRK-GMM-48", 1, "expired", ["foo-0"]) == harness.DISAGREE
    assert _changed("BRK-GMM-49", 3, "per_partition", {"foo-0": {"offset": 10}}) == harness.DISAGREE
    assert _changed("BRK-GMM-50", 1, "expired", ["bar-0", "foo-0"]) == harness.DISAGREE
    assert _changed("BRK-GMM-51", 1, "state", "DEAD") == harness.DISAGREE
    # the subscribed topics' offsets stay, the unsubscribed ones go
    assert _changed("BRK-GMM-52", 1, "expired", ["bar-0", "bar-1"]) == harness.DISAGREE
    assert _changed("BRK-GMM-52", 2, "expired", ["bar-0"]) == harness.DISAGREE
    # the authorization errors, and the coordinator left alone or reached
    assert _changed("BRK-KA-63", 0, "per_partition", {"topic-0": {"error": "TOPIC_AUTHORIZATION_FAILED"}}) \
        == harness.DISAGREE
    assert _changed("BRK-KA-63", 0, "state_after", {"partitions": ["bar-0", "topic-0"]}) == harness.DISAGREE
    assert _changed("BRK-KA-64", 0, "error", "TRANSACTIONAL_ID_AUTHORIZATION_FAILED") == harness.DISAGREE
    assert _changed("BRK-KA-65", 0, "per_partition", {"__consumer_offsets-0": {"error": "OPERATION_NOT_ATTEMPTED"}}) \
        == harness.DISAGREE
    assert _changed("BRK-KA-65", 0, "per_partition", {"bar-7": {"error": "OPERATION_NOT_ATTEMPTED"}}) == harness.DISAGREE
    assert _changed("BRK-KA-66", 0, "state_after", {"partitions": ["bar-0"]}) == harness.DISAGREE
    assert _changed("BRK-KA-67", 0, "appended", True) == harness.DISAGREE
    assert _changed("BRK-KA-68", 0, "appended", False) == harness.DISAGREE
    assert _changed("BRK-KA-69", 0, "appended", False) == harness.DISAGREE


def _group(state: GroupState, generation: int, committed: dict[int, int], pending: dict[int, int]) -> GroupMeta:
    g = new_group(3)
    offsets = tuple(CommittedOffset(committed[p], p) if p in committed else c for p, c in enumerate(g.offsets))
    return g._replace(state=int(state), generation_id=generation, offsets=offsets,
                      pending=tuple(PendingTxnOffset(5, p, o, 10 + p) for p, o in sorted(pending.items())))


def test_the_rule_on_its_own() -> None:
    consumer = ce.GroupKind("consumer", 5000, None)
    empty = _group(GroupState.EMPTY, 1, {0: 10, 1: 20}, {1: 21})
    kip211 = ce.cleanup_group_metadata(empty, consumer, {0: 0, 1: 0}, 15000, 10000, rule="kip-211", kip_496=True)
    old = ce.cleanup_group_metadata(empty, consumer, {0: 0, 1: 0}, 15000, 10000, rule="expire-timestamp", kip_496=True)
    # KIP-211: retention from the time the group became Empty, >=; every offset at once, the pending one left
    assert kip211.expired == (0, 1) and kip211.group.pending == empty.pending and not kip211.dead
    assert ce.cleanup_group_metadata(empty, consumer, {0: 0, 1: 0}, 14999, 10000, rule="kip-211", kip_496=True).expired == ()
    assert old.expired == (0, 1)
    # 2.0.x: the expire timestamp must be below now
    assert ce.cleanup_group_metadata(empty, consumer, {0: 0, 1: 5000}, 15000, 10000, rule="expire-timestamp",
                                     kip_496=True).expired == (0,)
    # no offsets and no pending ones: Dead, with the group tombstone only past generation 0
    bare = _group(GroupState.EMPTY, 0, {0: 10}, {})
    r = ce.cleanup_group_metadata(bare, ce.GroupKind(None, None, None), {0: 0}, 10000, 10000, rule="kip-211", kip_496=True)
    assert r.dead and not r.group_tombstone and r.group.state == GroupState.DEAD
    assert ce.cleanup_group_metadata(bare._replace(generation_id=2), ce.GroupKind(None, None, None), {0: 0}, 10000,
                                     10000, rule="kip-211", kip_496=True).group_tombstone
    # a Stable consumer group: KIP-496's unsubscribed topics only, and only with the branch
    stable = _group(GroupState.STABLE, 3, {0: 10, 2: 30}, {})
    kind = ce.GroupKind("consumer", 0, frozenset({0}))
    assert ce.cleanup_group_metadata(stable, kind, {0: 0, 2: 0}, 10000, 10000, rule="kip-211", kip_496=True).expired == (2,)
    assert ce.cleanup_group_metadata(stable, kind, {0: 0, 2: 0}, 10000, 10000, rule="kip-211", kip_496=False).expired == ()
    assert ce.cleanup_group_metadata(stable, ce.GroupKind("consumer", 0, None), {0: 0, 2: 0}, 10000, 10000,
                                     rule="kip-211", kip_496=True).expired == ()
    # a Stable group is never made Dead
    assert not ce.cleanup_group_metadata(stable, kind, {0: 0, 2: 0}, 99999, 10000, rule="expire-timestamp",
                                         kip_496=True).dead


def test_the_authorization_rules_on_their_own() -> None:
    known = ka.known_in({"foo": 1})
    assert ka.add_partitions_authorization(3, "t", ["foo-0"], frozenset(), known) is None
    assert ka.add_partitions_authorization(3, "t", ["foo-0"], {("TRANSACTIONAL_ID", "WRITE", "t")}, known) \
        == (0, {"foo-0": int(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)})
    # another transactional id's denial does not matter; a broker's v4 checks the cluster, not the id or the topics
    assert ka.add_partitions_authorization(3, "t", ["foo-0"], {("TRANSACTIONAL_ID", "WRITE", "u")}, known) is None
    assert ka.add_partitions_authorization(4, "t", ["foo-0"], {("TRANSACTIONAL_ID", "WRITE", "t"),
                                                               ("TOPIC", "WRITE", "foo")}, known) is None
    assert ka.add_partitions_authorization(4, "t", ["foo-0"], {ka.DENY_ALL}, known) \
        == (int(Errors.CLUSTER_AUTHORIZATION_FAILED), {})
    # an internal topic is never WRITE-authorized by name, even with nothing denied
    assert ka.add_partitions_authorization(0, "t", ["__transaction_state-0", "foo-0"], frozenset(), known) \
        == (0, {"__transaction_state-0": int(Errors.TOPIC_AUTHORIZATION_FAILED),
                "foo-0": int(Errors.OPERATION_NOT_ATTEMPTED)})
    cluster_action = ("CLUSTER", "CLUSTER_ACTION", ka.CLUSTER)
    alter = ("CLUSTER", "ALTER", ka.CLUSTER)
    assert ka.write_txn_markers_authorized({cluster_action}, alter_cluster=True)
    assert not ka.write_txn_markers_authorized({cluster_action}, alter_cluster=False)
    assert ka.write_txn_markers_authorized({alter}, alter_cluster=False)
    assert not ka.write_txn_markers_authorized({alter, cluster_action}, alter_cluster=True)
    assert SWITCH_HISTORY["write_txn_markers_alter_cluster"] == (((2, 0, 0), False), ((3, 8, 0), True))


def test_the_classic_step_refuses_the_new_coordinator_and_an_unmodelled_branch() -> None:
    vector = copy.deepcopy(vectors_by_id(MORE32)["BRK-GMM-48"])
    vector["initial_state"]["group"]["state"] = "PreparingRebalance"
    vector["steps"][1]["input"]["subscribed_topics"] = ["foo"]
    r = run_vector(vector, "kafka-2024-10")
    assert r.outcome == harness.NOT_EXPRESSIBLE and "KAFKA-13636" in r.reason
    vector = copy.deepcopy(vectors_by_id(MORE32)["BRK-GMM-43"])
    vector["initial_state"]["group"]["type"] = "consumer"
    assert "cleanupExpiredOffsets" in run_vector(vector).reason


def test_the_coverage_rows_cite_the_vectors() -> None:
    text = DOCS.read_text()
    for cls, test, vid in (("GroupMetadataManagerTest", "testOffsetExpirationOfSimpleConsumer", "BRK-GMM-42"),
                           ("GroupMetadataManagerTest", "testOffsetExpirationOfActiveGroupSemantics", "BRK-GMM-52"),
                           ("KafkaApisTest", "testHandleAddPartitionsToTxnAuthorizationFailedAndMetrics", "BRK-KA-64"),
                           ("KafkaApisTest", "requiredAclsNotPresentWriteTxnMarkersThrowsAuthorizationException",
                            "BRK-KA-67"),
                           ("KafkaApisTest", "shouldAppendToLogOnWriteTxnMarkersWhenCorrectMagicVersion", "BRK-KA-68")):
        row = next(line for line in text.splitlines() if line.startswith(f"| {cls} | `{test}`"))
        assert vid in row and "not covered" not in row
    for v in ALL:
        assert v in text, v
