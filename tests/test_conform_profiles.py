"""The conform profiles (``model/api/protocol.py``) against their version table: each profile is a
contiguous range of Kafka releases, lacks exactly the features first released after its range, and has
the switch values ``SWITCH_HISTORY`` gives every version of its range; the behaviours that tell
neighbouring profiles apart are checked directly."""

from __future__ import annotations

import itertools

import pytest
from eoscheck.model.api import coordinator as coordinator_api
from eoscheck.model.api import leader as leader_api
from eoscheck.model.api.protocol import (
    FEATURE_SINCE,
    FEATURES,
    LATER_TRUNK,
    PROFILE_ALIASES,
    PROFILE_TABLE,
    PROFILES,
    SNAPSHOT_2024_10,
    SWITCH_HISTORY,
    TRUNK_END,
    history_value,
    profile_for,
    profile_for_tag,
    protocol,
    version,
)
from eoscheck.model.errors import Errors
from eoscheck.model.group.metadata import NO_MEMBER_ID, GroupState, new_group
from eoscheck.model.group.txn_offset_commit import validate_txn_offset_commit
from eoscheck.model.partition.producer_state import find_entry
from eoscheck.model.state import TxnMetadata
from eoscheck.model.transactions.codes import TxnState

#: apache/kafka's release tags from 2.0.0 to 4.2.0 (``git tag`` of the mirror; 3.9.0 is its rc3, 4.2.0 its rc1), each
#: of which exactly one profile must stand for
_TAGS = ("2.0.0 2.0.1 2.1.0 2.1.1 2.2.0 2.2.1 2.2.2 2.3.0 2.3.1 2.4.0 2.4.1 2.5.0 2.5.1 2.6.0 2.6.1 2.6.2 2.6.3 "
         "2.7.0 2.7.1 2.7.2 2.8.0 2.8.1 2.8.2 3.0.0 3.0.1 3.0.2 3.1.0 3.1.1 3.1.2 3.2.0 3.2.1 3.2.2 3.2.3 3.3.0 "
         "3.3.1 3.3.2 3.4.0 3.4.1 3.5.0 3.5.1 3.5.2 3.6.0 3.6.1 3.6.2 3.7.0 3.7.1 3.8.0 3.9.0 "
         "4.0.0 4.0.1 4.1.0 4.1.1 4.2.0-rc1")
RELEASES = tuple(version(t) for t in _TAGS.split(" "))


def _covering(at: tuple[int, ...]) -> list[str]:
    return [n for n, p in PROFILE_TABLE.items() if p.first <= at <= p.last]


def test_every_release_and_the_snapshot_has_exactly_one_profile() -> None:
    for release in (*RELEASES, SNAPSHOT_2024_10, LATER_TRUNK, TRUNK_END):
        assert len(_covering(release)) == 1, (release, _covering(release))


def test_profiles_are_contiguous_ranges_without_gaps() -> None:
    ordered = sorted(PROFILE_TABLE.items(), key=lambda kv: kv[1].first)
    for (_, lo), (name, hi) in itertools.pairwise(ordered):
        assert lo.last < hi.first, name
        # no release falls between two neighbouring profiles
        assert not [r for r in RELEASES if lo.last < r < hi.first], name
    for name, p in PROFILE_TABLE.items():
        assert p.first <= p.last and p.protocol.name == name


@pytest.mark.parametrize("name", list(PROFILE_TABLE))
def test_a_profile_lacks_exactly_the_features_released_after_its_first_version(name: str) -> None:
    p = PROFILE_TABLE[name]
    assert set(FEATURE_SINCE) == set(FEATURES)
    for feature, since in FEATURE_SINCE.items():
        if since.first > p.first:
            # released after the range, or inside it (KAFKA-6635 2.3.0 in 2.0.1-2.3, KAFKA-13221 3.2.0 in 3.1.1-3.2,
            # KAFKA-16217 3.7.1 in 3.7): the profile stands for versions without it, so a vector needing it is not
            # expressible there rather than judged by half of the range
            assert feature in p.protocol.lacks, (name, feature)
        else:
            assert feature not in p.protocol.lacks, (name, feature)


@pytest.mark.parametrize("name", list(PROFILE_TABLE))
def test_a_profile_has_the_switch_values_of_every_version_of_its_range(name: str) -> None:
    p = PROFILE_TABLE[name]
    for field, history in SWITCH_HISTORY.items():
        changes = [first for first, _ in history if p.first < first <= p.last]
        assert not changes, (name, field, "changes inside the range at", changes)
        assert getattr(p.protocol, field) == history_value(field, p.first), (name, field)
    # the feature-level switches agree with the features
    assert p.protocol.producer_fenced == ("kip-588" not in p.protocol.lacks)
    assert p.protocol.failed_fence_keeps_epoch == ("kafka-9666" not in p.protocol.lacks)
    assert p.protocol.verification_abortable == ("transaction-abortable" not in p.protocol.lacks)
    assert (p.protocol.init_producer_id == "pre-kip360") == ("kip-360" in p.protocol.lacks)
    assert (p.protocol.txn_offset_commit == "pre-kip447") == ("kip-447" in p.protocol.lacks)


def test_each_profile_doc_names_its_versions_and_evidence() -> None:
    for name, p in PROFILE_TABLE.items():
        assert len(p.doc) > 80, name
        if p.last <= (4, 2, 0) and p.first != SNAPSHOT_2024_10:
            first = ".".join(map(str, p.first[:2]))
            assert p.doc.startswith("released ") and first in p.doc, name
    for since in FEATURE_SINCE.values():
        assert since.evidence


def test_old_profile_names_still_resolve() -> None:
    # kafka-2.0.1-2.3 (and its own old names) stood for 2.0.1 .. 2.3.1 with 2.0.1's features: kafka-2.0.1's switches,
    # until KIP-211's offset retention (2.1.0) split it
    assert PROFILE_ALIASES == {"kafka-2.7-3.9": "kafka-3.8-3.9", "kafka-2.0-2.4": "kafka-2.0.1",
                               "kafka-2.0-2.3": "kafka-2.0.1", "kafka-3.0-3.2": "kafka-3.1.1-3.2",
                               "kafka-2.0.1-2.3": "kafka-2.0.1"}
    for old, new in PROFILE_ALIASES.items():
        assert old in PROFILES and protocol(old) == protocol(new) and protocol(old).name == new
    with pytest.raises(KeyError, match="unknown variant"):
        protocol("kafka-9.9")


def test_a_commit_date_picks_the_release_its_trunk_commit_went_into() -> None:
    # a trunk commit after a branch cut goes into the next release
    assert profile_for(None, "2018-03-01") == "kafka-2.0.0"  # went into 2.0.0, before KAFKA-7296
    assert profile_for(None, "2019-05-01") == "kafka-2.1-2.3"
    assert profile_for(None, "2018-06-06") == "kafka-2.1-2.3"  # after the 2.0 cut: into 2.1.0, with KIP-211
    assert profile_for(None, "2019-06-01") == "kafka-2.4.0"
    assert profile_for(None, "2019-11-13") == "kafka-2.5"  # KAFKA-8710 (KIP-360), first tag 2.5.0
    assert profile_for(None, "2020-03-28") == "kafka-2.6"  # KAFKA-9600, first tag 2.6.0
    assert profile_for(None, "2020-08-12") == "kafka-2.7-2.8"  # KAFKA-9911, first tag 2.7.0
    assert profile_for(None, "2022-09-08") == "kafka-3.3-3.5"  # KAFKA-14201
    # KAFKA-13412 df2236d73bc (2022-01-19) went into 3.2.0; a trunk commit before the 3.1 branch cut into 3.1.0
    assert profile_for(None, "2022-01-19") == "kafka-3.1.1-3.2"
    assert profile_for(None, "2021-10-01") == "kafka-3.0-3.1.0"
    assert profile_for(None, "2023-09-04") == "kafka-3.7"  # KAFKA-15424; KAFKA-15449 (2023-10-02) too
    assert profile_for(None, "2023-06-01") == "kafka-3.6"
    assert profile_for(None, "2024-03-22") == "kafka-3.8-3.9"  # KAFKA-16314, first tag 3.8.0
    assert profile_for(None, "2024-10-25") == "kafka-2024-10"
    assert profile_for("1eb7644349cb07139d6a3c1ad1986979647cac99", None) == "kafka-2024-10"
    # the 4.x branch cuts: 4.0 2024-12-16, 4.1 2025-06-10, 4.2 2025-11-21
    assert profile_for(None, "2024-12-15") == "kafka-2024-10"
    assert profile_for(None, "2024-12-20") == "kafka-4.1.0"  # KAFKA-15370 [1/N] 3ef10a3f61, first tag 4.1.0
    assert profile_for(None, "2025-06-04") == "kafka-4.1.0"  # KAFKA-18042 cc25d217da, first tag 4.1.0
    assert profile_for(None, "2025-11-20") == "kafka-4.2"  # KAFKA-19446 [3/3] c1ded05067, first tag 4.2.0-rc1
    assert profile_for(None, "2026-02-20") == "kafka-later-trunk"
    # a release tag's commit picks its profile, whatever the date says
    assert profile_for("985bc99521dd22bbf620591b8db8613c54f596b2", "2025-03-14") == "kafka-4.0.0"
    assert profile_for("6eef66363478d2946fbc7d8f93c863246f7c14d5", None) == "kafka-4.2"


def test_a_release_tag_names_its_profile() -> None:
    assert {t: profile_for_tag(t) for t in ("4.0.0", "4.0.1", "4.1.0", "4.1.1", "4.2.0-rc1", "3.9.0", "2.4.1")} == {
        "4.0.0": "kafka-4.0.0", "4.0.1": "kafka-4.0.1", "4.1.0": "kafka-4.1.0", "4.1.1": "kafka-4.1.1",
        "4.2.0-rc1": "kafka-4.2", "3.9.0": "kafka-3.8-3.9", "2.4.1": "kafka-2.4.1"}
    # not a release tag, or a release no profile stands for (the mirror has no 4.0.2 tag)
    assert [profile_for_tag(t) for t in ("trunk", "", "4.x", "4.0.2", "1.1.0")] == [None] * 5
    # KIP-211 (KAFKA-4682, 2.1.0) splits 2.0.1 .. 2.3.1
    assert [profile_for_tag(t) for t in ("2.0.1", "2.1.0", "2.3.0")] == ["kafka-2.0.1", "kafka-2.1-2.3", "kafka-2.1-2.3"]


#: the 4.x profiles and later trunk, oldest first, with the first switch that tells each from the one before
_4X_STEPS = (("kafka-4.0.0", ""), ("kafka-4.0.1", "tv2_failed_fence_leaves_epoch"),
             ("kafka-4.1.0", "tv2_new_producer_sequence_zero"), ("kafka-4.1.1", "stale_epoch_before_verification"),
             ("kafka-4.2", "tv2_marker_epoch_check"), ("kafka-later-trunk", "fence_at_max_epoch"))


def test_each_4x_profile_differs_from_the_one_before_in_a_rule_the_interface_reads() -> None:
    """A 4.x release gets its own profile only where its switches differ from its neighbour's; each has the
    kafka.eos variant read at its tag, and the conformance-only fields are 4.0.0's in all of them but
    ``fence_at_max_epoch`` (KAFKA-20090, after 4.2.0-rc1), ``expiry_keeps_group_with_open_txns`` (KAFKA-19163, 4.0.1 and
    4.1.0 on: the group coordinator's offset retention, beside KAFKA-19367 in 4.0.1), ``pid_block_retry_bodyless``
    (KAFKA-19990, 4.2.0-rc0 on: the broker's producer-id block request) and what they lack: 4.0.x lack KIP-939's InitProducerId
    v6 (4.1.0), which does not differ inside 4.1.0 .. later trunk, nor does KIP-939's client transition table
    (PREPARED_TRANSACTION: 4.1.0 .. 4.2.0-rc1 and the mirror's main have the same ``isTransitionValid``); KAFKA-19272's
    way into it (``client_init_keeps_prepared``) is 4.2.0-rc1's, but no vector reaches it (no released client sends
    KeepPreparedTxn), so it tells no neighbours apart."""
    for (old, _), (new, switch) in itertools.pairwise(_4X_STEPS):
        a, b = protocol(old), protocol(new)
        where = a if switch in a._fields else a.eos
        there = b if switch in b._fields else b.eos
        assert getattr(where, switch) != getattr(there, switch), (old, new, switch)
    first = protocol("kafka-4.0.0")
    for name, _ in _4X_STEPS:
        p = protocol(name)
        assert p._replace(name="", eos=first.eos, fence_at_max_epoch="throw", lacks=first.lacks,
                          client_transitions=first.client_transitions, client_init_keeps_prepared=False,
                          expiry_keeps_group_with_open_txns=False, pid_block_retry_bodyless=False) == first._replace(name=""), name
        # KAFKA-19163 (4.0.1 and 4.1.0 on): the group coordinator's retention keeps a group with open transactions
        assert p.expiry_keeps_group_with_open_txns == (name != "kafka-4.0.0"), name
        assert p.lacks == (frozenset({"kip-939", "kip-1152"}) if name in ("kafka-4.0.0", "kafka-4.0.1") else frozenset()), name
        assert p.client_transitions == ("4.0" if name in ("kafka-4.0.0", "kafka-4.0.1") else "4.1"), name
        assert p.client_init_keeps_prepared == (name in ("kafka-4.2", "kafka-later-trunk")), name
        assert p.fence_at_max_epoch == ("keep" if name == "kafka-later-trunk" else "throw"), name
        # KAFKA-19990 (ca9a1b1037, 4.2.0-rc0): RPCProducerIdManager retries after a body-less AllocateProducerIds answer
        assert p.pid_block_retry_bodyless == (name in ("kafka-4.2", "kafka-later-trunk")), name
        # KAFKA-14563 (755adf8a56, 4.0.0): PrepareAbort after Empty / CompleteX in every 4.x table
        assert p.prepare_abort_from_ended, name


# --- the behaviours that tell neighbouring profiles apart ---------------------------------------------


def _leader_with_fenced_producer(name: str) -> leader_api.LeaderState:
    """Producer 7 writes a data batch at epoch 0 (time 10); then an ABORT marker with epoch 1 (the
    coordinator's fence) is written at time 50, which clears its batch cache."""
    p = protocol(name)
    st = leader_api.LeaderState((), 0, now=10)
    res, st = leader_api.append_batch(st, leader_api.ProduceBatch(7, 0, 0, 0, transactional=True), p)
    assert res.error == Errors.NONE
    st = st._replace(now=50)
    res, st = leader_api.append_marker(st, leader_api.MarkerRequest(7, 1, 0, 0), p)
    assert res.error == Errors.NONE
    return st


def test_kafka_9144_markers_set_the_producer_timestamp_from_2_4_1() -> None:
    old = find_entry(_leader_with_fenced_producer("kafka-2.4.0").producers, 7)
    new = find_entry(_leader_with_fenced_producer("kafka-2.4.1").producers, 7)
    assert old is not None and new is not None
    assert new.last_timestamp == 50
    # the new epoch cleared the cache: nothing keeps the old timestamp, so the entry is NO_TIMESTAMP
    assert old.last_timestamp == -1 and old.epoch == new.epoch == 1
    # ... and expires measured from NO_TIMESTAMP (2.4.0: at once on a real clock), while 2.4.1 keeps it
    # until 50 + expiration
    for name, kept in (("kafka-2.4.0", False), ("kafka-2.4.1", True)):
        st = _leader_with_fenced_producer(name)._replace(now=60)
        after = leader_api.remove_expired_producers(st, 55)
        assert (find_entry(after.producers, 7) is not None) == kept, name


def test_3_0_to_3_2_check_a_member_id_with_generation_minus_one_on_an_empty_group() -> None:
    """KAFKA-14201 (3.3.0): a generation < 0 on an Empty group is accepted whatever the member id; 3.0.0-3.2.x's
    validateOffsetCommit checks the member (UNKNOWN_MEMBER_ID: an Empty group has none)."""
    empty = new_group(1)._replace(generation_id=3)
    assert empty.state == GroupState.EMPTY and not empty.members
    answers = {name: validate_txn_offset_commit(empty, check=protocol(name).txn_offset_commit, generation_id=-1,
                                                member_id=5)
               for name in ("kafka-2.7-2.8", "kafka-3.0-3.1.0", "kafka-3.1.1-3.2", "kafka-3.3-3.5")}
    assert answers == {"kafka-2.7-2.8": Errors.UNKNOWN_MEMBER_ID, "kafka-3.0-3.1.0": Errors.UNKNOWN_MEMBER_ID,
                       "kafka-3.1.1-3.2": Errors.UNKNOWN_MEMBER_ID, "kafka-3.3-3.5": Errors.NONE}
    # with no member id all three accept (the request a pre-KIP-447 or eos-alpha producer sends)
    for name in answers:
        assert validate_txn_offset_commit(empty, check=protocol(name).txn_offset_commit, generation_id=-1,
                                          member_id=NO_MEMBER_ID) == Errors.NONE


def _ongoing(epoch: int) -> coordinator_api.CoordinatorState:
    meta = TxnMetadata(True, 10, 10, epoch, -1, int(TxnState.ONGOING), False)
    return coordinator_api.CoordinatorState(meta, 20)


def test_kafka_2_5_fence_keeps_the_old_epoch_as_last_epoch_so_the_fenced_producer_gets_the_new_one() -> None:
    """Fidelity audit C2: in 2.5.x the timeout abort records the epoch before the fence as lastProducerEpoch,
    so the fenced producer's InitProducerId(pid, old epoch) passes as a retry and gets the fenced epoch;
    2.6.0 sets lastProducerEpoch to -1 and the same request is fenced."""
    answers = {}
    for name in ("kafka-2.5", "kafka-2.6"):
        p = protocol(name)
        wrote, st = coordinator_api.abort_timed_out(_ongoing(3), p)
        assert wrote and st.metadata.epoch == 4 and st.metadata.state == TxnState.PREPARE_ABORT
        assert st.metadata.last_epoch == (3 if name == "kafka-2.5" else -1)
        _, st = coordinator_api.complete_transaction(st, p)
        resp, _ = coordinator_api.handle_init_producer_id(
            st, coordinator_api.InitProducerIdRequest("t", 10, 3, version=3), p)
        answers[name] = (resp.error, resp.epoch)
    assert answers["kafka-2.5"] == (Errors.NONE, 4)
    assert answers["kafka-2.6"] == (Errors.INVALID_PRODUCER_EPOCH, -1)  # no PRODUCER_FENCED before 2.7


def test_kafka_9666_a_failed_fence_is_not_bumped_again_from_2_6() -> None:
    epochs = {}
    for name in ("kafka-2.5", "kafka-2.6"):
        p = protocol(name)
        _, st = coordinator_api.abort_timed_out(_ongoing(3), p, append_error=Errors.NOT_ENOUGH_REPLICAS)
        assert st.metadata.epoch == 4 and st.metadata.state == TxnState.ONGOING
        assert st.metadata.has_failed_epoch_fence == (name == "kafka-2.6")
        _, st = coordinator_api.abort_timed_out(st, p)
        epochs[name] = st.metadata.epoch
    assert epochs == {"kafka-2.5": 5, "kafka-2.6": 4}


def test_kafka_16314_verification_outside_the_transaction_is_abortable_from_3_8() -> None:
    meta = TxnMetadata(True, 10, 10, 3, -1, int(TxnState.ONGOING), False, partitions=(1,))
    st = coordinator_api.CoordinatorState(meta, 20)
    got = {name: dict(coordinator_api.verify_partitions(st, "t", 10, 3, (1, 2), protocol(name)))
           for name in ("kafka-3.6", "kafka-3.7", "kafka-3.8-3.9")}
    assert got["kafka-3.6"] == got["kafka-3.7"] == {1: Errors.NONE, 2: Errors.INVALID_TXN_STATE}
    assert got["kafka-3.8-3.9"] == {1: Errors.NONE, 2: Errors.TRANSACTION_ABORTABLE}


# --- the composed machines' named release variants (model/protocol.py) against the same table ------------

#: named release variant -> the releases it claims (clipped to 2.0.0+, where SWITCH_HISTORY starts)
_NAMED_RANGES = {
    "kafka-1.0.2-2.3": ("2.0.0", "2.3.1"), "kafka-2.4": ("2.4.0", "2.4.0"), "kafka-2.4.1": ("2.4.1", "2.4.1"),
    "kafka-2.6": ("2.6.0", "2.6.3"), "kafka-2.7-2.8": ("2.7.0", "2.8.2"), "kafka-3.0-3.1": ("3.0.0", "3.1.2"),
    "kafka-3.2": ("3.2.0", "3.2.3"), "kafka-3.0-3.2": ("3.0.0", "3.1.2"),
    "kafka-3.3-3.5": ("3.3.0", "3.5.2"), "kafka-3.6-3.7": ("3.6.0", "3.7.1"), "kafka-3.8-3.9": ("3.8.0", "3.9.0"),
    # the wide names kept for specs and tests: their docs say which part of the range differs, and how
    "kafka-2.5-2.8": ("2.7.0", "2.8.2"), "kafka-3.0-3.5": ("3.3.0", "3.5.2"), "kafka-3.6-3.9": ("3.8.0", "3.9.0"),
}

#: composed decision -> (the conform switch that records the same change, how to read it)
_SAME_CHANGE = {
    "broker_retain_producer_state": "broker_retain_producer_state", "broker_unknown_producer": "broker_unknown_producer",
    "client_version": "client_version", "init_producer_id": "init_producer_id",
    "marker_sets_producer_timestamp": "marker_sets_producer_timestamp", "txn_offset_commit_check": "txn_offset_commit",
    # KIP-588 brought both PRODUCER_FENCED and the abortable InvalidProducerEpochException (2.7.0)
    "invalid_producer_epoch_abortable": "producer_fenced",
    # KAFKA-9666 (2.6.0): a failed fence is remembered (hasFailedEpochFence)
    "failed_fence_keeps_epoch": "failed_fence_keeps_epoch",
    # KAFKA-16314 (3.8.0): the coordinator's TRANSACTION_ABORTABLE for a partition outside the transaction
    "verification_abortable": "verification_abortable",
    # PR 15266 (3.8.0): TxnOffsetCommitHandler retries every retriable error
    "client_txn_offset_commit_any_retriable": "txn_offset_commit_any_retriable",
}


@pytest.mark.parametrize("name", list(_NAMED_RANGES))
def test_named_release_variants_of_the_composed_machines_match_the_version_table(name: str) -> None:
    from eoscheck.model.protocol import VARIANTS
    p = VARIANTS[name].protocol.as_switches()
    lo, hi = (version(v) for v in _NAMED_RANGES[name])
    for release in (r for r in RELEASES if lo <= r <= hi):
        for decision, conform in _SAME_CHANGE.items():
            assert p[decision] == history_value(conform, release), (name, release, decision)
        assert p["partition_verification"] == (release >= FEATURE_SINCE["kip-890-verification"].first)
        assert p["transaction_version"] == "tv1"
        # the 3.8.0 client sends Produce v11 / TxnOffsetCommit v4 (3.7.1 ProduceRequest.json stops at v10)
        assert p["client_transaction_abortable"] == (release >= FEATURE_SINCE["transaction-abortable"].first)
    if name == "kafka-2.5-2.8":
        assert VARIANTS[name].protocol == VARIANTS["kafka-2.7-2.8"].protocol
        assert "kafka-2.6" in VARIANTS[name].doc and "2.5.x" in VARIANTS[name].doc
    if name == "kafka-3.6-3.9":
        assert VARIANTS[name].protocol == VARIANTS["kafka-3.8-3.9"].protocol
        assert "kafka-3.6-3.7" in VARIANTS[name].doc and "INVALID_TXN_STATE" in VARIANTS[name].doc
    if name == "kafka-3.0-3.5":
        assert VARIANTS[name].protocol == VARIANTS["kafka-3.3-3.5"].protocol
        # and the 3.0-3.1 client's failed send() (KAFKA-9279, 3.2.0)
        assert VARIANTS["kafka-3.0-3.1"].protocol == VARIANTS[name].protocol.with_(txn_offset_commit_check="3.0",
                                                                                   client_send_error_aborts=False)
    if name == "kafka-3.0-3.2":
        assert VARIANTS[name].protocol == VARIANTS["kafka-3.0-3.1"].protocol
        assert "kafka-3.2" in VARIANTS[name].doc and "KAFKA-9279" in VARIANTS[name].doc
    # KAFKA-9279 (000ba031c3d, first tag 3.2.0; 3.1.2's KafkaProducer.doSend has no maybeTransitionToErrorState):
    # no conform switch records it, so the composed decision is checked against the tags here
    lo_release = version(_NAMED_RANGES[name][0])
    assert p["client_send_error_aborts"] == (lo_release >= (3, 2, 0)), name
