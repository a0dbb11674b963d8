"""Session 28's ``tests/data/kafka-unit-test-vectors.more28.json``: ReplicaManagerTest's tests of verification, the
several-producer check, the partition lookup, idempotent appends, the producer-state gauges and the read_committed
fetch at the last stable offset, pinned per profile; comparisons that can fail; the rules on their own; a coverage
row per exactly-once test of the class."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import pytest
from conform_pins import assert_coverage_table_names_vectors, assert_pinned, outcome_totals, run_vector, vectors_by_id
from eoscheck.model.api import leader as api
from eoscheck.model.api.protocol import PROFILE_TABLE, PROFILES, history_value, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.errors import Errors
from eoscheck.model.partition.produce_request import partition_error, several_producers, started_before_check
from eoscheck.model.partition.stable_read import AbortedTxn, aborted_in_range, last_stable_offset

MORE28 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more28.json"
ALL = tuple(f"BRK-RM-{n}" for n in range(30, 42))
#: the vectors whose steps verify (a transactional id with verification on): KIP-890 part 1, 3.6.0
VERIFIED = ("BRK-RM-30", "BRK-RM-31", "BRK-RM-32", "BRK-RM-33", "BRK-RM-36", "BRK-RM-37", "BRK-RM-38")
#: ReplicaManagerTest's tests that touch producer state, transactions, the LSO or idempotent appends, at 1eb7644 and
#: 4.2.0-rc1 (each has a row in docs/conformance.md's ReplicaManagerTest block)
EOS_TESTS = (
    "testFencedErrorCausedByBecomeLeader", "testReceiveOutOfOrderSequenceExceptionWithLogStartOffset",
    "testProducerIdCountMetrics", "testPartitionsWithLateTransactionsCount", "testReadCommittedFetchLimitedAtLSO",
    "testDelayedFetchIncludesAbortedTransactions", "testVerificationForTransactionalPartitionsOnly",
    "testTransactionVerificationFlow", "testTransactionVerificationBlocksOutOfOrderSequence",
    "testTransactionVerificationGuardOnMultiplePartitions", "testExceptionWhenUnverifiedTransactionHasMultipleProducerIds",
    "testTransactionVerificationWhenNotLeader", "testDisabledTransactionVerification",
    "testTransactionVerificationDynamicDisablement", "testVerificationErrorConversions", "testPreVerificationError",
    "testActiveProducerState", "testTransactionVerificationRejectsLowerProducerEpoch",
    "testVerificationErrorConversionsTV1", "testVerificationErrorConversionsTV2", "testTransactionAddPartitionRetry",
)


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """The pin from the profile: the verifying vectors need KIP-890 part 1 (3.6.0), ReplicaManager's verification of
    one partition KAFKA-15449 (3.7.0), DescribeProducers KIP-664; before KAFKA-8710 (2.5.0) a new producer's batch at
    sequence 1 is UNKNOWN_PRODUCER_ID."""
    p = protocol(name)
    inexpressible: dict[str, str] = {}
    if "kip-890-verification" in p.lacks:
        inexpressible.update(dict.fromkeys(VERIFIED, "kip-890-verification"))
    elif "kafka-15449" in p.lacks:
        inexpressible["BRK-RM-33"] = "kafka-15449"
    if "kip-664" in p.lacks:
        inexpressible["BRK-RM-39"] = "kip-664"
    disagree = {} if p.broker_unknown_producer == "accept" else {
        "BRK-RM-35": "before KAFKA-8710 producer 456's first batch at sequence 1 is UNKNOWN_PRODUCER_ID"}
    return disagree, inexpressible


def test_the_pins_name_the_profiles_read() -> None:
    assert _derived("kafka-2024-10") == ({}, {}) and _derived("kafka-3.7") == ({}, {})
    assert _derived("kafka-3.6") == ({}, {"BRK-RM-33": "kafka-15449"})
    assert set(_derived("kafka-3.3-3.5")[1]) == set(VERIFIED)
    assert set(_derived("kafka-2.7-2.8")[1]) == {*VERIFIED, "BRK-RM-39"}
    assert set(_derived("kafka-2.4.1")[0]) == {"BRK-RM-35"} and not _derived("kafka-2.5")[0]


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more28_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE28), name, disagree, inexpressible)


def test_each_vector_agrees_under_the_snapshot_it_was_read_at() -> None:
    run = harness.run_file(load_vectors(MORE28))
    assert outcome_totals(run) == {"agree": 12, "disagree": 0, "not expressible": 0} and {v.id for v in run.vectors} == set(ALL)
    # the two read at 3.5.2 (no verification) are judged under its profile, the others under the 2024-10 snapshot's
    assert {v.id: v.variant for v in run.vectors if v.variant != "kafka-2024-10"} == {
        "BRK-RM-40": "kafka-3.3-3.5", "BRK-RM-41": "kafka-3.3-3.5"}


def test_the_coverage_table_names_the_vectors() -> None:
    assert_coverage_table_names_vectors(MORE28)
    doc = (Path(__file__).parent.parent / "docs" / "conformance.md").read_text()
    for test in EOS_TESTS:
        rows = [line for line in doc.splitlines() if line.startswith("| ReplicaManagerTest |") and f"`{test}`" in line]
        assert len(rows) == 1, test


def _changed(vid: str, change: Callable[[dict], object], variant: str | None = None) -> str:
    v = copy.deepcopy(vectors_by_id(MORE28)[vid])
    change(v)
    return run_vector(v, variant).outcome


def _other(v: dict) -> dict:
    return v["steps"][0]["input"]["other_partitions"][0]


def test_the_several_producer_check_follows_the_version() -> None:
    # one producer at two epochs: refused from KAFKA-15987 (3.8.0), let through by 3.6 / 3.7 (then two partitions to
    # append, which a one-partition world cannot)
    def same_pid_other_epoch(v: dict) -> None:
        _other(v).update(producer_id=24, producer_epoch=1)
    assert _changed("BRK-RM-31", same_pid_other_epoch) == harness.AGREE
    assert _changed("BRK-RM-31", same_pid_other_epoch, "kafka-3.7") == harness.NOT_EXPRESSIBLE
    # verification off: 3.8.0 on still refuses, 3.6 / 3.7 do not look
    def unverified(v: dict) -> None:
        v["initial_state"]["transaction_verification_enabled"] = False
    assert _changed("BRK-RM-31", unverified) == harness.AGREE
    assert _changed("BRK-RM-31", unverified, "kafka-3.6") == harness.NOT_EXPRESSIBLE
    # 3.6 / 3.7 start the partition's verification entry before throwing; 3.8.0 on do not
    def no_entry(v: dict) -> None:
        v["steps"][0]["expected"]["verification_entry_present"] = False
    assert _changed("BRK-RM-31", no_entry) == harness.AGREE
    assert _changed("BRK-RM-31", no_entry, "kafka-3.7") == harness.DISAGREE
    # the other partition's batch is idempotent: nothing to refuse
    assert _changed("BRK-RM-31", lambda v: _other(v).update(is_transactional=False)) == harness.NOT_EXPRESSIBLE


def test_the_comparisons_can_fail() -> None:
    # a partition the metadata cache does not know is UNKNOWN_TOPIC_OR_PARTITION; a leader starts the verification
    assert _changed("BRK-RM-32", lambda v: v["steps"][0]["input"].update(in_metadata_cache=False)) == harness.DISAGREE
    assert _changed("BRK-RM-32", lambda v: v["steps"][0]["input"].update(replica="leader")) == harness.DISAGREE
    assert _changed("BRK-RM-33", lambda v: v["steps"][0]["input"].update(replica="follower")) == harness.AGREE
    assert _changed("BRK-RM-33", lambda v: v["steps"][0]["input"].update(replica="leader")) == harness.DISAGREE
    assert _changed("BRK-RM-34", lambda v: v["steps"][3]["expected"].update(log_start_offset=-1)) == harness.DISAGREE
    assert _changed("BRK-RM-34", lambda v: v["steps"][3]["input"].update(base_sequence=3, last_sequence=3)) \
        == harness.DISAGREE
    assert _changed("BRK-RM-35", lambda v: v["steps"][3]["input"].update(ms=86399999)) == harness.DISAGREE
    assert _changed("BRK-RM-36", lambda v: v["steps"][5]["input"].update(ms=0)) == harness.DISAGREE
    # the COMMIT marker is not replicated: nothing of the transaction is read yet
    assert _changed("BRK-RM-37", lambda v: v["steps"][7]["expected"].update(batches=4)) == harness.DISAGREE
    assert _changed("BRK-RM-37", lambda v: v["steps"][8]["input"].update(offset=3)) == harness.DISAGREE
    # committed, the transaction is not in the aborted list
    assert _changed("BRK-RM-38", lambda v: v["steps"][3]["input"].update(result="COMMIT")) == harness.DISAGREE
    # without followers' fetches the high watermark stays at 0: nothing is stable
    assert _changed("BRK-RM-41", lambda v: v["steps"].pop(4)) == harness.DISAGREE
    assert _changed("BRK-RM-40", lambda v: v["steps"][9]["expected"].update(batches=3), "kafka-2.0.0") \
        == harness.DISAGREE
    assert _changed("BRK-RM-39", lambda v: v["steps"][3]["input"].update(replica="none")) == harness.DISAGREE
    assert _changed("BRK-RM-39", lambda v: v["steps"][0]["input"].update(in_metadata_cache=True)) == harness.DISAGREE


def test_the_rules_on_their_own() -> None:
    two_ids, two_epochs = [(24, 0), (25, 0)], [(24, 0), (24, 1)]
    assert not several_producers(two_ids, "none", verifying=True)
    assert several_producers(two_ids, "producer-id", verifying=True)
    assert not several_producers(two_ids, "producer-id", verifying=False)
    assert not several_producers(two_epochs, "producer-id", verifying=True)
    assert several_producers(two_epochs, "producer-id-and-epoch", verifying=False)
    assert not several_producers([(24, 0), (24, 0)], "producer-id-and-epoch", verifying=True)
    assert started_before_check("producer-id") and not started_before_check("producer-id-and-epoch")
    assert partition_error("none", True, needs_leader=True) == Errors.NOT_LEADER_OR_FOLLOWER
    assert partition_error("none", False, needs_leader=False) == Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert partition_error("follower", True, needs_leader=True) == Errors.NOT_LEADER_OR_FOLLOWER
    assert partition_error("follower", True, needs_leader=False) == Errors.NONE
    assert last_stable_offset(None, 4) == 4 and last_stable_offset(0, 4) == 0 and last_stable_offset(4, 4) == 4
    index = (AbortedTxn(1, 0, 3), AbortedTxn(2, 5, 9))
    assert aborted_in_range(index, 4, 10) == (index[1],) and aborted_in_range(index, 0, 5) == (index[0],)
    assert aborted_in_range(index, 3, 6) == index
    # a read at or past the last stable offset reads nothing, with an empty aborted list
    batch = api.ProduceBatch(1, 0, 0, 2, first_offset=0, transactional=True)
    assert api.read_committed((batch,), 0, 3, 0, 3, index) == api.ReadCommitted(0, (), ())
    assert api.read_committed((batch,), 0, 3, None, 3, index) == api.ReadCommitted(3, ((0, 2, 3),), (index[0],))


def test_the_switch_follows_its_history() -> None:
    assert history_value("produce_pid_check", (3, 5, 2)) == "none"
    assert history_value("produce_pid_check", (3, 7, 1)) == "producer-id"
    assert history_value("produce_pid_check", (3, 8, 0)) == "producer-id-and-epoch"
    for name, profile in PROFILE_TABLE.items():
        assert profile.protocol.produce_pid_check == history_value("produce_pid_check", profile.first) \
            == history_value("produce_pid_check", profile.last), name


def test_a_disabled_verification_looks_nothing_up() -> None:
    # maybeStartTransactionVerificationForPartitions returns before getPartitionOrException when verification is off
    def disabled(v: dict) -> None:
        v["initial_state"]["transaction_verification_enabled"] = False
        v["steps"][0]["expected"]["callback_error"] = "NONE"
    assert _changed("BRK-RM-33", disabled) == harness.AGREE
