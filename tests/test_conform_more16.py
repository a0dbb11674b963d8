"""Session 26's vectors (``tests/data/kafka-unit-test-vectors.more16.json``): the new group coordinator's DeleteGroups and
tombstone replay with pending transactional offsets (KAFKA-14505 [8/8]), TxnOffsetCommit's metadata size, producer state
rebuilt from compacted batches (KAFKA-5490), and a __transaction_state partition's load and unload (KAFKA-9307,
KAFKA-14869), pinned per profile; comparisons that can fail; the rules' older versions on the rules directly."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conform_pins import assert_coverage_table_names_vectors, assert_pinned, outcome_totals
from eoscheck.model.api.protocol import FEATURE_SINCE, PROFILE_TABLE, PROFILES, SWITCH_HISTORY, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors
from eoscheck.model.coordinator.txn_partition_cache import (
    NOT_CACHED,
    LogRecord,
    TxnPartitionCache,
    load_partition,
    lookup_error,
    replay_records,
    unload_partition,
)
from eoscheck.model.errors import Errors
from eoscheck.model.group.metadata import NO_COMMIT, CommittedOffset, PendingTxnOffset, new_group
from eoscheck.model.group.offset_delete import delete_all_offsets, replay_offset_tombstone
from eoscheck.model.group.offset_metadata_size import metadata_too_large, oversized_partitions
from eoscheck.model.state import TxnLogValue

MORE16 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more16.json"
OMM = ("BRK-OMM-50", "BRK-OMM-51", "BRK-OMM-52")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    disagree: dict[str, str] = {}
    inexpressible: dict[str, str] = {}
    if not p.offset_delete_pending:
        disagree.update(dict.fromkeys(OMM, "before KAFKA-14505 [8/8] (3.8.0) pending-only offsets keep no tombstone"))
    if not p.txn_reload_replaces:
        disagree["BRK-TSM-10"] = "before KAFKA-9307 (2.4.1) a reload over a cached entry throws and stays loading"
    if "kafka-14869" in p.lacks:
        inexpressible["BRK-TSM-12"] = "kafka-14869"
    return disagree, inexpressible


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more16_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE16), name, disagree, inexpressible)


def test_the_default_run_agrees_and_the_counts_per_profile_are_the_documented_ones() -> None:
    vf = load_vectors(MORE16)
    assert outcome_totals(harness.run_file(vf)) == {"agree": 11, "disagree": 0, "not expressible": 0}
    got = {n: tuple(outcome_totals(harness.run_file(vf, n)).values()) for n in PROFILE_TABLE}
    assert {n for n, t in got.items() if t == (11, 0, 0)} == {n for n, p in PROFILE_TABLE.items() if p.first >= (3, 8, 0)}
    assert got["kafka-3.7"] == got["kafka-3.6"] == (8, 3, 0)
    assert got["kafka-3.3-3.5"] == got["kafka-2.4.1"] == (7, 3, 1)
    assert got["kafka-2.4.0"] == got["kafka-2.0.0"] == (6, 4, 1)


def test_the_switch_and_the_feature_have_their_versions() -> None:
    assert SWITCH_HISTORY["txn_reload_replaces"][-1] == ((2, 4, 1), True)
    assert {n for n, p in PROFILE_TABLE.items() if p.protocol.txn_reload_replaces} == {
        n for n, p in PROFILE_TABLE.items() if p.first >= (2, 4, 1)}
    assert FEATURE_SINCE["kafka-14869"].first == (3, 4, 1)
    (v,) = [r for r in harness.run_file(load_vectors(MORE16), "kafka-3.3-3.5").vectors if r.id == "BRK-TSM-12"]
    assert "KAFKA-14869" in v.reason and "versions before 3.4.1 lack" in v.reason


def _run_changed(vid: str, change: Callable[[dict], object], variant: str | None = None) -> str:
    data = json.loads(MORE16.read_text())
    data["vectors"] = [copy.deepcopy(v) for v in data["vectors"] if v["id"] == vid]
    change(data["vectors"][0])
    (v,) = harness.run_file(parse_vectors(data), variant).vectors
    return v.outcome


def _step(index: int, **changes: object) -> Callable[[dict], None]:
    def change(v: dict) -> None:
        v["steps"][index]["input"].update(changes)
    return change


def _expect(index: int, **changes: object) -> Callable[[dict], None]:
    def change(v: dict) -> None:
        v["steps"][index]["expected"].update(changes)
    return change


def test_the_group_comparisons_can_fail() -> None:
    # without the pending-only partition there are three tombstones, not four
    def no_bar_2(v: dict) -> None:
        del v["initial_state"]["pending_txn_offsets"]["10"]["bar-2-0"]
    assert _run_changed("BRK-OMM-50", no_bar_2) == harness.DISAGREE
    # a partition with both a committed and a pending offset gets one tombstone, not two
    assert _run_changed("BRK-OMM-51", _expect(0, num_deleted_offsets=5)) == harness.DISAGREE
    # a tombstone for bar-0 alone leaves bar-1's pending offset
    def one_tombstone(v: dict) -> None:
        v["steps"][7]["input"]["partition"] = "bar-0"
    assert _run_changed("BRK-OMM-52", one_tombstone) == harness.DISAGREE
    # metadata at the limit is accepted; the limit is read
    assert _run_changed("BRK-GC-10", _step(0, metadata_lengths={"foo-0": 4096})) == harness.DISAGREE
    assert _run_changed("BRK-GC-10", _step(0, metadata_lengths={"foo-0": None})) == harness.DISAGREE
    assert _run_changed("BRK-GC-10", _step(0, offset_metadata_max_bytes=5000)) == harness.DISAGREE


def test_an_oversized_partition_is_refused_alone_and_a_group_error_is_everyones() -> None:
    def mixed(v: dict) -> None:
        v["steps"][0]["input"]["offsets"] = {"foo-0": 37, "foo-1": 38}
        v["steps"][0]["expected"] = {"per_partition": {"foo-0": {"error": "OFFSET_METADATA_TOO_LARGE"},
                                                       "foo-1": {"error": "NONE"}},
                                     "pending_txn": {"100": {"foo-1": 38}}}
    assert _run_changed("BRK-GC-10", mixed) == harness.AGREE
    # every partition too large: nothing pending
    assert _run_changed("BRK-GC-10", _expect(0, pending_txn={})) == harness.AGREE

    def known_generation(v: dict) -> None:
        v["initial_state"]["group"] = {"state": "Empty", "members": [], "committed": {}}
        v["steps"][0]["input"].update(member_id="m", generation_id=1)
        v["steps"][0]["expected"] = {"per_partition": {"foo-0": {"error": "UNKNOWN_MEMBER_ID"}}}
    # the group is validated first (doTxnCommitOffsets), the metadata after (storeOffsets)
    assert _run_changed("BRK-GC-10", known_generation) == harness.AGREE


def test_the_compacted_batch_comparisons_can_fail() -> None:
    # the header decides: a batch of sequences 0..1 (the retained count) would give last sequence 1
    assert _run_changed("BRK-UL-20", _step(0, last_sequence=1, retained_records=2)) == harness.DISAGREE
    assert _run_changed("BRK-UL-22", _expect(3, last_sequence=0)) == harness.DISAGREE
    # a retained count the header cannot hold is refused
    assert _run_changed("BRK-UL-20", _step(0, retained_records=5)) == harness.NOT_EXPRESSIBLE
    # the truncation rebuilds the state from the log: truncating below the batch leaves no producer
    def below(v: dict) -> None:
        v["steps"][2]["input"]["offset"] = 23
    assert _run_changed("BRK-UL-21", below) == harness.DISAGREE


def test_the_partition_load_comparisons_can_fail() -> None:
    # the cache entry is the newest load's
    assert _run_changed("BRK-TSM-10", _expect(1, coordinator_epoch=0)) == harness.DISAGREE
    # a tombstone for two removes it from the load
    def tombstone(v: dict) -> None:
        v["steps"][2]["input"]["transaction_log"].append({"transactional_id": "two", "tombstone": True})
    assert _run_changed("BRK-TSM-11", tombstone) == harness.DISAGREE
    # the records' order decides: two's Empty record first leaves it CompleteAbort
    def reordered(v: dict) -> None:
        log = v["steps"][2]["input"]["transaction_log"]
        log.insert(3, log.pop())
    assert _run_changed("BRK-TSM-11", reordered) == harness.DISAGREE
    # the unknown record is skipped, not read as a transaction
    assert _run_changed("BRK-TSM-12", _expect(0, transactional_ids=["", "one"])) == harness.DISAGREE
    # an emigration unloads the partition: the lookup answers NOT_COORDINATOR
    def no_resignation(v: dict) -> None:
        del v["steps"][0]
    assert _run_changed("SM-150", no_resignation) == harness.DISAGREE


def test_delete_all_offsets_per_version() -> None:
    g = new_group(3)._replace(offsets=(CommittedOffset(100, 0), CommittedOffset(100, 1), NO_COMMIT),
                              pending=(PendingTxnOffset(10, 1, 101, 2), PendingTxnOffset(10, 2, 100, 3)))
    tombstones, after = delete_all_offsets(g, pending_aware=True)
    assert tombstones == (0, 1, 2) and not after.pending and after.offsets == (NO_COMMIT,) * 3
    # 3.7.x: the committed ones only, and their replay leaves the pending offsets
    tombstones, after = delete_all_offsets(g, pending_aware=False)
    assert tombstones == (0, 1) and after.pending == g.pending
    assert replay_offset_tombstone(g, 2, pending_aware=True).pending == (PendingTxnOffset(10, 1, 101, 2),)
    assert replay_offset_tombstone(g, 2, pending_aware=False) == g


def test_the_metadata_size_rule() -> None:
    assert not metadata_too_large(None) and not metadata_too_large(4096) and metadata_too_large(4097)
    assert oversized_partitions({0: 10, 1: 4097, 2: None}) == frozenset({1})
    assert oversized_partitions({0: 10}, max_size=5) == frozenset({0})


def _value(state: int) -> TxnLogValue:
    return TxnLogValue(True, 1, -1, 0, -1, state, (0,))


def test_the_partition_cache_per_version() -> None:
    records = [LogRecord("one", _value(4)), LogRecord("two", _value(0)), LogRecord("two", None)]
    assert set(replay_records(records, skip_unknown_keys=True)) == {"one"}
    with pytest.raises(ValueError):
        replay_records([LogRecord("", None, known_key=False)], skip_unknown_keys=False)
    first = load_partition(TxnPartitionCache(), 0, records, reload_replaces=False, skip_unknown_keys=True)
    assert first.completed and first.cache == TxnPartitionCache(0, ()) and lookup_error(first.cache) == 0
    # KAFKA-9307 (2.4.1): a reload over a cached entry replaces it; before, the entry is put and the partition stays
    # loading (no markers sent)
    again = load_partition(first.cache, 1, records, reload_replaces=True, skip_unknown_keys=True)
    assert again.completed and again.cache == TxnPartitionCache(1, ())
    stuck = load_partition(first.cache, 1, records, reload_replaces=False, skip_unknown_keys=True)
    assert not stuck.completed and stuck.cache == TxnPartitionCache(1, (1,))
    assert lookup_error(stuck.cache) == Errors.COORDINATOR_LOAD_IN_PROGRESS
    gone = unload_partition(again.cache)
    assert gone.cached_epoch == NOT_CACHED and lookup_error(gone) == Errors.NOT_COORDINATOR
    with pytest.raises(ValueError):
        unload_partition(stuck.cache)


def test_the_coverage_table_names_each_vector() -> None:
    assert_coverage_table_names_vectors(MORE16)
