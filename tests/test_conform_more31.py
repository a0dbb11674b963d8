"""Session 28's ``tests/data/kafka-unit-test-vectors.more31.json``: LogCleanerTest's tests of what compaction keeps of
transactional data and producer state (aborted batches dropped, markers kept while their transaction has batches and
until their delete horizon, an emptied batch kept for a live producer's last sequence or epoch); pinned per profile;
comparisons that can fail; the cleaner's rule on its own; a coverage row per LogCleanerTest test."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from conform_pins import assert_pinned, coverage_rows, outcome_totals, run_vector, vectors_by_id
from eoscheck.model.api.protocol import PROFILE_TABLE, PROFILES, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.partition import log_cleaner as lc

MORE31 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more31.json"
ALL = tuple(f"BRK-LC-{n:02d}" for n in range(1, 16))
#: the one vector without a marker: an idempotent producer's emptied batch (KAFKA-5490, before every profile)
NO_MARKER = "BRK-LC-12"
#: the vectors in which a marker with nothing left of its transaction waits for, or passes, its delete horizon
HORIZON = ("BRK-LC-01", "BRK-LC-04", "BRK-LC-05", "BRK-LC-06", "BRK-LC-09", "BRK-LC-10", "BRK-LC-11",
           "BRK-LC-15")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """Before KAFKA-8335 / KAFKA-8351 every vector with a marker is not expressible; before KIP-534 those whose marker
    removal hangs on the delete horizon (the segments' times then)."""
    p = protocol(name)
    if "kafka-8335" in p.lacks:
        return {}, {v: "KAFKA-8335" for v in ALL if v != NO_MARKER}
    if "kafka-8522" in p.lacks:
        return {}, dict.fromkeys(HORIZON, "KIP-534")
    return {}, {}


def test_the_pins_name_the_profiles_read() -> None:
    assert _derived("kafka-4.2") == ({}, {}) == _derived("kafka-3.6")
    assert set(_derived("kafka-3.0-3.1.0")[1]) == set(HORIZON) == set(_derived("kafka-2.4.0")[1])
    assert len(_derived("kafka-2.0.1-2.3")[1]) == 14 == len(_derived("kafka-2.0.0")[1])


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more31_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE31), name, disagree, inexpressible)
    run = harness.run_file(load_vectors(MORE31), name)
    for v in run.vectors:
        if v.id in inexpressible:
            ticket = "KAFKA-8335" if inexpressible[v.id] == "KAFKA-8335" else "KAFKA-8522"
            assert ticket in v.reason, (name, v.id, v.reason)


def test_the_default_run_judges_each_vector_at_1eb7644_and_agrees() -> None:
    run = harness.run_file(load_vectors(MORE31))
    assert {v.id for v in run.vectors} == set(ALL)
    assert outcome_totals(run) == {"agree": 15, "disagree": 0, "not expressible": 0}
    got = {n: tuple(outcome_totals(harness.run_file(load_vectors(MORE31), n)).values()) for n in PROFILE_TABLE}
    assert got["kafka-later-trunk"] == got["kafka-3.6"] == (15, 0, 0)
    assert got["kafka-3.0-3.1.0"] == got["kafka-2.4.0"] == (7, 0, 8)
    assert got["kafka-2.0.0"] == (1, 0, 14)


def _changed(vid: str, step: int, field: str, value: object) -> harness.VectorReport:
    vector = copy.deepcopy(vectors_by_id(MORE31)[vid])
    vector["steps"][step]["expected"][field] = value
    return run_vector(vector)


def test_the_vectors_compare_what_they_claim() -> None:
    # the first pass keeps both abort markers, the second drops their index entries, the third the markers
    assert _changed("BRK-LC-01", 15, "offsets", [0, 2, 3, 4, 5, 6, 7, 13, 14, 15, 17, 18, 19]).outcome == harness.DISAGREE
    assert _changed("BRK-LC-01", 16, "aborted_txns", [[1, 8, 10], [2, 11, 16]]).outcome == harness.DISAGREE
    assert _changed("BRK-LC-01", 17, "offsets", [0, 2, 4, 5, 6, 7, 10, 13, 15, 16, 17, 18, 19]).outcome == harness.DISAGREE
    # an aborted batch goes whatever its keys
    assert _changed("BRK-LC-02", 9, "keys", ["1", "3", "2"]).outcome == harness.DISAGREE
    assert _changed("BRK-LC-03", 12, "keys", ["1", "2", "3", "5", "6", "6", "7", "7", "8", "8", "9", "9", "10"]
                    ).outcome == harness.DISAGREE
    # the COMMIT marker at 3 is not removed before its horizon
    assert _changed("BRK-LC-04", 11, "offsets", [4, 5, 6, 7, 8]).outcome == harness.DISAGREE
    # emptied batches of the producers' last data stay
    assert _changed("BRK-LC-05", 10, "last_offsets_per_batch", [4, 5, 6, 7]).outcome == harness.DISAGREE
    assert _changed("BRK-LC-06", 6, "last_offsets_per_batch", [1, 2]).outcome == harness.DISAGREE
    assert _changed("BRK-LC-07", 5, "offsets", [0]).outcome == harness.DISAGREE
    # an ABORT marker whose transaction's emptied batch is still read stays past any horizon
    assert _changed("BRK-LC-08", 5, "offsets", []).outcome == harness.DISAGREE
    assert _changed("BRK-LC-09", 8, "offsets", [3, 4, 5]).outcome == harness.DISAGREE
    assert _changed("BRK-LC-10", 7, "last_offsets_per_batch", [1, 3, 4, 5]).outcome == harness.DISAGREE
    assert _changed("BRK-LC-11", 11, "aborted_txns", [[1, 0, 2]]).outcome == harness.DISAGREE
    assert _changed("BRK-LC-12", 6, "last_sequences", {"1": 1, "2": 1, "3": 0}).outcome == harness.DISAGREE
    assert _changed("BRK-LC-13", 4, "last_sequences", {"1": 0}).outcome == harness.DISAGREE
    # a data key equal to a marker's is not matched against the control record
    assert _changed("BRK-LC-14", 6, "offsets", [0, 1, 2]).outcome == harness.DISAGREE
    assert _changed("BRK-LC-15", 8, "offsets", [1, 3, 4]).outcome == harness.DISAGREE


def _b(off: int, pid: int, kind: int, keys: tuple[str, ...] = ("k",), horizon: int = -1) -> lc.LogBatch:
    records = tuple((off + i, k) for i, k in enumerate(keys)) if kind == lc.DATA else ((off, "<control>"),)
    last = off + len(records) - 1
    return lc.LogBatch(off, last, pid, 0, last - off if kind == lc.DATA else -1, True, kind, records, horizon)


def test_a_marker_goes_only_after_a_pass_set_its_horizon_and_time_passed_it() -> None:
    log = (_b(0, 1, lc.DATA, ("a",)), _b(1, 1, lc.COMMIT), _b(2, 1, lc.DATA, ("a",)), _b(3, 1, lc.COMMIT))
    live = {1: lc.LastRecord(2, 0)}
    first = lc.clean(log, (), live, lc.CleanPass(4, 0, 4, 100, 10))
    # the batch at 0 is superseded and not the producer's last: gone; its marker was read with it: kept, no horizon
    assert [b.base_offset for b in first.batches] == [1, 2, 3] and first.batches[0].delete_horizon == -1
    second = lc.clean(first.batches, (), live, lc.CleanPass(4, 4, 4, 100, 10))
    assert second.batches[0].delete_horizon == 110 and second.horizon_consulted
    assert lc.clean(second.batches, (), live, lc.CleanPass(4, 4, 4, 109, 10)).batches == second.batches
    assert [b.base_offset for b in lc.clean(second.batches, (), live, lc.CleanPass(4, 4, 4, 110, 10)).batches] == [2, 3]


def test_an_aborted_batch_is_kept_empty_only_while_it_is_the_producers_last() -> None:
    log = (_b(0, 1, lc.DATA, ("a", "b")), _b(2, 1, lc.ABORT))
    aborted = (lc.IndexedAbort(1, 0, 2),)
    kept = lc.clean(log, aborted, {1: lc.LastRecord(1, 0)}, lc.CleanPass(3, 0, 3, 0, 10))
    assert [(b.base_offset, b.records) for b in kept.batches] == [(0, ()), (2, ((2, "<control>"),))]
    assert kept.aborted_index == aborted
    gone = lc.clean(log, aborted, {1: lc.LastRecord(7, 0)}, lc.CleanPass(3, 0, 3, 0, 10))
    assert [b.base_offset for b in gone.batches] == [2]


def test_every_logcleanertest_test_has_a_row() -> None:
    rows = coverage_rows("LogCleanerTest")
    assert len(rows) == 49
    cited = {t for rest in rows.values() for t in re.findall(r"BRK-LC-\d\d", rest.rstrip(" |").split(" | ", 1)[1])}
    assert cited == set(ALL)
    tests = {v["source"]["test"] for v in vectors_by_id(MORE31).values()}
    assert tests <= set(rows)
