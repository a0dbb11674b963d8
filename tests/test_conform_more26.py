"""Session 27's ``tests/data/kafka-unit-test-vectors.more26.json``: the idempotent and transactional producer's
disconnect out of retries (NETWORK_EXCEPTION fails the batch with NetworkException; before KAFKA-19176 it is the
transactional producer's lastError, from 4.1.0 a TransactionAbortableException around it), and RecordAccumulatorTest's
tests that decide producer state, pinned per profile; comparisons that can fail; the rules on their own; a coverage
row per RecordAccumulatorTest test."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from conform_pins import assert_pinned, coverage_rows, outcome_totals, run_vector, vectors_by_id
from eoscheck.model.api import client as api
from eoscheck.model.api.protocol import PROFILE_TABLE, PROFILES, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.errors import RETRIABLE, Errors

MORE26 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more26.json"
ALL = tuple(f"CLI-{n}" for n in range(470, 477))
#: the transactional disconnect read before KAFKA-19176 (3.9.1) and from it on (4.2.0-rc1)
BEFORE_19176, FROM_19176 = "CLI-471", "CLI-472"
#: RecordAccumulatorTest's methods at 1eb7644 and at 4.2.0-rc1 (testIdempotenceWithOldMagic and testStickyBatches
#: were removed in 4.0.0; the last three came with 4.2.0-rc0)
RECORD_ACCUMULATOR_TESTS = (
    "testDrainBatches", "testFull", "testAppendLargeCompressed", "testAppendLargeNonCompressed",
    "testAppendLargeOldMessageFormatCompressed", "testAppendLargeOldMessageFormatNonCompressed", "testLinger",
    "testPartialDrain", "testStressfulSituation", "testNextReadyCheckDelay", "testRetryBackoff",
    "testExponentialRetryBackoff", "testExponentialRetryBackoffLeaderChange", "testFlush", "testAwaitFlushComplete",
    "testAbortIncompleteBatches", "testAbortUnsentBatches", "testExpiredBatchSingle", "testExpiredBatchSingleMaxValue",
    "testExpiredBatches", "testMutedPartitions", "testIdempotenceWithOldMagic",
    "testRecordsDrainedWhenTransactionCompleting", "testSplitAndReenqueue",
    "testHasRoomForAllowsOversizedFirstRecordButRejectsSubsequentRecords", "testSplitBatchOffAccumulator",
    "testSplitFrequency", "testSoonToExpireBatchesArePickedUpForExpiry", "testExpiredBatchesRetry",
    "testStickyBatches", "testUniformBuiltInPartitioner", "testAdaptiveBuiltInPartitioner",
    "testBuiltInPartitionerFractionalBatches", "testReadyAndDrainWhenABatchIsBeingRetried",
    "testDrainWithANodeThatDoesntHostAnyPartitions", "testSplitAndReenqueuePreventInfiniteRecursion",
    "testProduceRequestResultAwaitAllDependents",
)


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """The pin from the profile: the harness's client is KIP-360's (2.5.0), so nothing is expressible before it; the
    transactional disconnect's lastError disagrees with the tag not read (KAFKA-19176's wrapping, 4.1.0)."""
    p = protocol(name)
    if "kip-360" in p.lacks:
        return {}, dict.fromkeys(ALL, "kip-360")
    if p.eos.client_batch_error_wrapped_abortable:
        return {BEFORE_19176: "lastError is the TransactionAbortableException around it"}, {}
    return {FROM_19176: "lastError is the NetworkException itself"}, {}


def test_the_pins_name_the_profiles_read() -> None:
    assert _derived("kafka-2.4.1") == ({}, dict.fromkeys(ALL, "kip-360"))
    assert set(_derived("kafka-2.5")[0]) == set(_derived("kafka-4.0.1")[0]) == {FROM_19176}
    assert set(_derived("kafka-4.1.0")[0]) == set(_derived("kafka-4.2")[0]) == {BEFORE_19176}


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more26_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE26), name, disagree, inexpressible)


def test_the_default_run_judges_each_vector_under_its_tag_and_agrees() -> None:
    run = harness.run_file(load_vectors(MORE26))
    assert outcome_totals(run) == {"agree": 7, "disagree": 0, "not expressible": 0}
    variants = {v.id: v.variant for v in run.vectors}
    # profile_for_tag dates 3.9.1's commit after the 3.9 cut: the 2024-10 snapshot's profile, before KAFKA-19176 too
    assert variants[FROM_19176] == "kafka-4.2"
    assert {variants[v] for v in ALL if v != FROM_19176} == {"kafka-2024-10"}
    got = {n: tuple(outcome_totals(harness.run_file(load_vectors(MORE26), n)).values()) for n in PROFILE_TABLE}
    assert {t for n, t in got.items() if "kip-360" in protocol(n).lacks} == {(0, 0, 7)}
    assert {t for n, t in got.items() if "kip-360" not in protocol(n).lacks} == {(6, 1, 0)}


def _changed(vid: str, step: int, field: str, value: object) -> harness.VectorReport:
    vector = copy.deepcopy(vectors_by_id(MORE26)[vid])
    vector["steps"][step]["expected"][field] = value
    return run_vector(vector)


def test_a_disconnect_out_of_retries_is_not_a_timeout() -> None:
    """The harness answered a disconnect as REQUEST_TIMED_OUT before session 27: its exception would be TimeoutException."""
    for vid in ("CLI-470", BEFORE_19176, FROM_19176):
        report = _changed(vid, 4, "batch_error", "TimeoutException")
        assert report.outcome == harness.DISAGREE, vid
    assert _changed(BEFORE_19176, 4, "last_error", "TimeoutException").outcome == harness.DISAGREE
    assert _changed("CLI-470", 4, "next_sequence", 1).outcome == harness.DISAGREE  # no sequence adjusted: r2 keeps 1
    assert _changed("CLI-470", 4, "producer_epoch", 1).outcome == harness.DISAGREE  # no bump out of retries


def test_the_accumulator_vectors_compare_what_they_claim() -> None:
    assert _changed("CLI-473", 2, "unresolved", False).outcome == harness.DISAGREE
    assert _changed("CLI-473", 3, "producer_epoch", 0).outcome == harness.DISAGREE
    assert _changed("CLI-474", 1, "unresolved", True).outcome == harness.DISAGREE
    assert _changed("CLI-475", 9, "aborted_batches", []).outcome == harness.DISAGREE
    assert _changed("CLI-475", 9, "has_incomplete", False).outcome == harness.DISAGREE
    assert _changed("CLI-476", 5, "request", {"base_sequence": 1, "producer_epoch": 0,
                                                 "producer_id": 123456}).outcome == harness.DISAGREE


def test_network_exception_is_retriable_and_named() -> None:
    """NetworkException is an InvalidMetadataException, a RetriableException, in every version modelled."""
    assert Errors.NETWORK_EXCEPTION in RETRIABLE
    network = int(Errors.NETWORK_EXCEPTION)
    assert api.failed_batch_error(network, transactional=False, wrap_in_abortable=False) == "NetworkException"
    assert api.failed_batch_error(network, transactional=True, wrap_in_abortable=False) == "NetworkException"
    assert api.failed_batch_error(network, transactional=True, wrap_in_abortable=True) == "TransactionAbortableException"
    assert api.failed_batch_error(network, transactional=False, wrap_in_abortable=True) == "NetworkException"


@pytest.mark.parametrize("transactional", [False, True])
def test_a_disconnect_is_retried_and_out_of_retries_fails_without_adjustment(transactional: bool) -> None:
    entry, _ = api.assign(api.PartitionEntry(7, 0), "r1", 1, 2**31 - 1)
    entry, _ = api.assign(entry, "r2", 1, 2**31 - 1)
    network = int(Errors.NETWORK_EXCEPTION)
    retried = api.on_produce_error(entry, "r1", network, -1, transactional=transactional)
    assert retried.retry and not retried.bump_epoch and not retried.abortable
    failed = api.on_produce_error(entry, "r1", network, -1, transactional=transactional, can_retry=False,
                                  adjust_sequences=False)
    assert not failed.retry and not failed.bump_epoch and failed.abortable == transactional
    assert failed.entry.next_sequence == 2 and [b.base_sequence for b in failed.entry.in_flight] == [1]
    # with retries left but not retried (the delivery timeout), the failure adjusts: r2 moves down, or the epoch bumps
    adjusted = api.on_produce_error(entry, "r1", network, -1, transactional=transactional, can_retry=False)
    assert adjusted.bump_epoch != transactional
    assert [b.base_sequence for b in adjusted.entry.in_flight] == ([0] if transactional else [1])


def test_every_record_accumulator_test_has_one_row() -> None:
    rows = coverage_rows("RecordAccumulatorTest")
    assert set(rows) == set(RECORD_ACCUMULATOR_TESTS) and len(RECORD_ACCUMULATOR_TESTS) == 37
    vectors = vectors_by_id(MORE26)
    covered: dict[str, str] = {}
    for test, row in rows.items():
        mechanism, cell = row.rstrip(" |").split(" | ", 1)
        assert mechanism == "producer_client", test
        m = re.match(r"(CLI-\d+) \(more26\)", cell)
        assert m is not None or cell.startswith("not covered: "), test
        if m:
            covered[test] = m.group(1)
    for test, vid in covered.items():
        source = vectors[vid]["source"]
        assert source["file"].endswith("RecordAccumulatorTest.java") and source["test"].startswith(test + " "), test
    assert len(covered) == 4
