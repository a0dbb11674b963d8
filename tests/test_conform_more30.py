"""Session 28's ``tests/data/kafka-unit-test-vectors.more30.json``: ProducerStateManagerTest's and UnifiedLogTest's tests
of the producer-state snapshots that decide what a reload keeps (deleteSnapshotsBefore, truncateFullyAndStartAt,
truncateAndReload's range and its fallback past a corrupt snapshot, the snapshots deleted with segments, the roll's
snapshot, a snapshot past the log end at load) and of the aborted transactions, first unstable and last stable offset,
and ProducerIdManagerTest's testConcurrentGeneratePidRequests (a block asked for ahead waits for the current one);
pinned per profile; comparisons that can fail; the rules on their own; a coverage row per test the vectors cite."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from conform_pins import assert_pinned, coverage_rows, outcome_totals, run_vector, vectors_by_id
from eoscheck.model.api import leader as api
from eoscheck.model.api.protocol import PROFILE_TABLE, PROFILES, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.coordinator import producer_ids as pids
from eoscheck.model.errors import Errors
from eoscheck.model.state import CachedBatch, ProducerStateEntry

MORE30 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more30.json"
PSM = tuple(f"BRK-PSM-{n}" for n in range(50, 56))
UL = tuple(f"BRK-UL-{n}" for n in range(30, 41))
#: testConcurrentGeneratePidRequests at idBlockLen 1, 2, 10 and 100
PIDM = tuple(f"BRK-PIDM-{n}" for n in range(13, 17))
#: TransactionManagerTest's testDisconnectAndRetry (the harness's client is KIP-360's)
CLIENT = ("CLI-530",)
ALL = PSM + UL + PIDM + CLIENT
#: the vectors whose deleteOldSegments deletes segments, and with them their snapshots (KAFKA-9393, 2.8.0)
SEGMENT_DELETION = ("BRK-UL-30", "BRK-UL-31", "BRK-UL-32", "BRK-UL-33")
#: testReloadSnapshots' producer begins at sequence 1, which a broker before KIP-360's (2.5.0) refuses
FIRST_SEQUENCE_ONE = "BRK-PSM-52"


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """The pin from the profile: segment deletion is not expressible before KAFKA-9393; a new producer's first
    sequence 1 is UNKNOWN_PRODUCER_ID before the broker accepts an unknown producer (2.5.0)."""
    p = protocol(name)
    disagree = {} if p.broker_unknown_producer == "accept" else {
        FIRST_SEQUENCE_ONE: "a new producer's first batch at sequence 1 is refused (UnknownProducerIdException)"}
    inexpressible = dict.fromkeys(SEGMENT_DELETION, "kafka-9393") if "kafka-9393" in p.lacks else {}
    if "kip-360" in p.lacks:
        inexpressible.update(dict.fromkeys(CLIENT, "kip-360"))
    return disagree, inexpressible


def test_the_pins_name_the_profiles_read() -> None:
    assert _derived("kafka-4.2") == ({}, {}) == _derived("kafka-3.0-3.1.0")
    assert _derived("kafka-2.7-2.8") == ({}, dict.fromkeys(SEGMENT_DELETION, "kafka-9393"))
    assert set(_derived("kafka-2.5")[1]) == set(SEGMENT_DELETION) and not _derived("kafka-2.5")[0]
    assert set(_derived("kafka-2.4.1")[0]) == {FIRST_SEQUENCE_ONE} == set(_derived("kafka-2.0.0")[0])
    assert _derived("kafka-2.4.1")[1] == {**dict.fromkeys(SEGMENT_DELETION, "kafka-9393"), "CLI-530": "kip-360"}


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more30_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE30), name, disagree, inexpressible)


def test_the_default_run_judges_each_vector_at_1eb7644_and_agrees() -> None:
    run = harness.run_file(load_vectors(MORE30))
    assert {v.id for v in run.vectors} == set(ALL)
    assert outcome_totals(run) == {"agree": 22, "disagree": 0, "not expressible": 0}
    assert {v.variant for v in run.vectors} == {"kafka-2024-10"}
    got = {n: tuple(outcome_totals(harness.run_file(load_vectors(MORE30), n)).values()) for n in PROFILE_TABLE}
    assert got["kafka-later-trunk"] == got["kafka-3.0-3.1.0"] == (22, 0, 0)
    assert got["kafka-2.7-2.8"] == got["kafka-2.5"] == (18, 0, 4)
    assert got["kafka-2.4.1"] == got["kafka-2.0.0"] == (16, 1, 5)


def _changed(vid: str, step: int, field: str, value: object) -> harness.VectorReport:
    vector = copy.deepcopy(vectors_by_id(MORE30)[vid])
    vector["steps"][step]["expected"][field] = value
    return run_vector(vector)


def test_the_snapshot_vectors_compare_what_they_claim() -> None:
    # deleteSnapshotsBefore's bound is exclusive: the snapshot at 3 stays
    assert _changed("BRK-PSM-50", 5, "snapshot_offsets", []).outcome == harness.DISAGREE
    assert _changed("BRK-PSM-51", 5, "snapshot_count", 2).outcome == harness.DISAGREE
    # truncateAndReload(3, 5) deletes the snapshot at the log start offset
    assert _changed("BRK-PSM-52", 6, "snapshot_offsets", [3, 5]).outcome == harness.DISAGREE
    for vid in ("BRK-PSM-53", "BRK-PSM-54", "BRK-PSM-55"):
        # the damaged snapshot is gone and the entry is the older snapshot's
        assert _changed(vid, 5, "snapshot_offsets", [1, 2]).outcome == harness.DISAGREE, vid
        assert _changed(vid, 5, "producers_after", {"1": {"last_offset": 1}}).outcome == harness.DISAGREE, vid
    # deleting segments keeps the producer state (KAFKA-7190) but not their snapshots
    assert _changed("BRK-UL-30", 8, "active_producers", 1).outcome == harness.DISAGREE
    assert _changed("BRK-UL-30", 7, "snapshot_count", 2).outcome == harness.DISAGREE
    assert _changed("BRK-UL-31", 7, "snapshot_count", 2).outcome == harness.DISAGREE
    assert _changed("BRK-UL-32", 7, "log_start_offset", 2).outcome == harness.DISAGREE
    assert _changed("BRK-UL-33", 6, "snapshot_count", 2).outcome == harness.DISAGREE
    assert _changed("BRK-UL-34", 3, "producers_after", {"1": {"last_offset": 1}}).outcome == harness.DISAGREE
    assert _changed("BRK-UL-35", 7, "latest_snapshot_offset", 4).outcome == harness.DISAGREE
    assert _changed("BRK-UL-36", 0, "snapshot_count", 1).outcome == harness.DISAGREE


def test_the_transaction_vectors_compare_what_they_claim() -> None:
    for vid, abort in (("BRK-UL-37", 7), ("BRK-UL-40", 7)):
        wrong = {"producer_id": 1, "first_offset": 5, "last_offset": 29, "is_aborted": True}
        assert _changed(vid, abort, "completed_txn", wrong).outcome == harness.DISAGREE, vid
        assert _changed(vid, 19, "first_unstable_offset", 14).outcome == harness.DISAGREE, vid
        assert _changed(vid, 20, "first_unstable_offset", None).outcome == harness.DISAGREE, vid
    assert _changed("BRK-UL-38", 4, "first_unstable_offset", 0).outcome == harness.DISAGREE
    # the high watermark at the commit marker: the last stable offset stays at the committed transaction's start
    assert _changed("BRK-UL-39", 7, "last_stable_offset", 8).outcome == harness.DISAGREE
    assert _changed("BRK-UL-39", 9, "last_stable_offset", 28).outcome == harness.DISAGREE


def test_the_producer_id_vectors_compare_what_they_claim() -> None:
    assert _changed("BRK-PIDM-13", 0, "error", "NONE").outcome == harness.DISAGREE
    assert _changed("BRK-PIDM-14", 4, "producer_ids", "3..4").outcome == harness.DISAGREE
    # idBlockLen 100: the block asked for at id 90 waits; 91..99 are handed out before it (the model skipped them)
    assert _changed("BRK-PIDM-16", 4, "producer_ids", "100..108").outcome == harness.DISAGREE
    assert _changed("BRK-PIDM-16", 9, "producer_ids", "209..299").outcome == harness.DISAGREE


def test_a_disconnected_lookup_is_resent_without_an_error() -> None:
    assert _changed("CLI-530", 0, "result", "failed").outcome == harness.DISAGREE
    assert _changed("CLI-530", 0, "lookup_coordinator", True).outcome == harness.DISAGREE
    assert _changed("CLI-530", 0, "client_state", "FATAL_ERROR").outcome == harness.DISAGREE
    assert _changed("CLI-530", 1, "result", "pending").outcome == harness.DISAGREE


def test_a_block_granted_early_waits_for_the_current_one() -> None:
    state = pids.ProducerIdBlocks(0, (), block_size=10)
    state = pids.grant_block(state, 0)
    handed = []
    for _ in range(9):
        gen, state = pids.generate_producer_id(state, 0, synchronous=False)
        handed.append(gen.producer_id)
    state = pids.grant_block(state, 0)  # the prefetched block arrives with id 9 still to hand out
    assert state.waiting == (pids.BrokerBlock(0, 10, 20),)
    for _ in range(11):
        gen, state = pids.generate_producer_id(state, 0, synchronous=False)
        handed.append(gen.producer_id)
    assert handed == list(range(20)) and state.waiting == ()
    gen, state = pids.generate_producer_id(state, 0, synchronous=False)
    assert gen.error == Errors.COORDINATOR_LOAD_IN_PROGRESS
    # another broker's block does not wait for this one's
    other = pids.grant_block(pids.ProducerIdBlocks(0, (pids.BrokerBlock(0, 0, 10),), block_size=10), 1)
    assert other.waiting == () and pids._block(other, 1) == pids.BrokerBlock(1, 0, 10)
    # ZooKeeper mode replaces an exhausted block within the call, as before
    gen, zk = pids.generate_producer_id(pids.ProducerIdBlocks(0, (), block_size=2), 0)
    assert (gen.producer_id, zk.blocks, zk.waiting) == (0, (pids.BrokerBlock(0, 1, 2),), ())


def _entry(pid: int, last_offset: int) -> ProducerStateEntry:
    return ProducerStateEntry(pid, 0, (CachedBatch(0, last_offset, 0),), 0, -1, -1)


def test_a_reload_falls_back_past_unreadable_snapshots() -> None:
    p = protocol("kafka-2024-10")
    state = api.LeaderState((), 0, 0, ())
    snapshots = ((1, (_entry(1, 0),)), (2, (_entry(1, 1),)), (3, (_entry(1, 2),)))
    loaded, kept = api.truncate_and_reload(state, snapshots, 0, 20, 0, 86400000, p, frozenset({2, 3}))
    assert [o for o, _ in kept] == [1] and loaded.log_end_offset == 1
    assert [e.batches[-1].offset for e in loaded.producers] == [0]
    # every snapshot unreadable: empty, at the log start offset
    loaded, kept = api.truncate_and_reload(state, snapshots, 0, 20, 0, 86400000, p, frozenset({1, 2, 3}))
    assert kept == () and loaded.producers == () and loaded.log_end_offset == 0
    # an unreadable snapshot below a readable one is never read: kept
    loaded, kept = api.truncate_and_reload(state, snapshots, 0, 20, 0, 86400000, p, frozenset({1}))
    assert [o for o, _ in kept] == [1, 2, 3] and loaded.log_end_offset == 3
    # the map end offset already at the log end: nothing loaded, nothing unreadable deleted
    at_end = state._replace(log_end_offset=20)
    _, kept = api.truncate_and_reload(at_end, snapshots, 0, 20, 0, 86400000, p, frozenset({3}))
    assert [o for o, _ in kept] == [1, 2, 3]


def test_delete_old_segments_stops_at_the_high_watermark_and_keeps_an_empty_last_segment() -> None:
    base = copy.deepcopy(vectors_by_id(MORE30)["BRK-UL-32"])
    # the high watermark below the log end: retention deletes only the segments it has passed
    base["steps"][6]["input"]["offset"] = 2
    base["steps"][6]["expected"] = {}
    base["steps"][7]["expected"] = {"snapshot_offsets": [2, 3], "log_start_offset": 2, "deleted_segments": 2}
    assert run_vector(base).outcome == harness.AGREE
    # without a policy breached nothing is deleted
    plain = copy.deepcopy(vectors_by_id(MORE30)["BRK-UL-33"])
    del plain["steps"][6]["input"]["retention_breached"]
    plain["steps"][6]["expected"] = {"snapshot_count": 2, "log_start_offset": 0, "deleted_segments": 0}
    assert run_vector(plain).outcome == harness.AGREE


def test_a_written_vector_without_segments_still_moves_only_the_log_start_offset() -> None:
    """EXP-06 (written.json) names deleteOldSegments with a log start offset and no roll: no segment to delete, so
    no KAFKA-9393 need, and the producer state stays under every profile from KAFKA-7190 on."""
    written = Path(__file__).parent / "data" / "kafka-unit-test-vectors.written.json"
    vector = vectors_by_id(written)["EXP-06"]
    assert run_vector(vector).outcome == harness.AGREE
    assert run_vector(vector, "kafka-2.4.0").outcome == harness.AGREE


def test_the_coverage_rows_name_the_more30_vectors_of_their_test() -> None:
    vectors = vectors_by_id(MORE30)
    named: set[str] = set()
    for cls, suffix in (("ProducerStateManagerTest", "ProducerStateManagerTest.java"),
                        ("UnifiedLogTest", "UnifiedLogTest.scala"), ("ProducerIdManagerTest", "ProducerIdManagerTest.scala"),
                        ("TransactionManagerTest", "TransactionManagerTest.java")):
        for test, row in coverage_rows(cls).items():
            cell = row.rstrip(" |").split(" | ", 1)[1]
            if not re.search(r"\(more30[;)]", cell):
                # a reason may point at a vector; a covered row names its own first
                assert cell.startswith("not covered") or not re.search(
                    r"\b(BRK-(PSM-5\d|UL-[34]\d|PIDM-1[3-6])|CLI-53\d)\b", cell), test
                continue
            ids = re.findall(r"\b(?:BRK-(?:PSM|UL|PIDM)|CLI)-\d+", cell.split("(more30")[0])
            assert ids and cell.startswith(ids[0]), test
            for vid in ids:
                source = vectors[vid]["source"]
                assert source["file"].endswith(suffix) and source["test"] == test, (test, vid)
                named.add(vid)
    assert named == set(ALL)


def test_the_unified_log_tests_without_a_row_before_have_one() -> None:
    rows = coverage_rows("UnifiedLogTest")
    for test in ("testOffsetFromProducerSnapshotFile", "testTruncateToEndOffsetClearsEpochCache",
                 "testFetchOffsetByTimestampIncludesLeaderEpoch", "testWriteLeaderEpochCheckpointAfterDirectoryRename",
                 "testLeaderEpochCacheClearedAfterDowngradeInAppendedMessages",
                 "testLeaderEpochCacheClearedAfterDynamicMessageFormatDowngrade",
                 "testLeaderEpochCacheCreatedAfterMessageFormatUpgrade",
                 "testRecoveryPointNotIncrementedOnProducerStateSnapshotFlushFailure"):
        assert rows[test].startswith("produce_validation | not covered (session 28, read at 1eb7644"), test
