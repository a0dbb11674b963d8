"""Session 19's vectors (``tests/data/kafka-unit-test-vectors.more7.json``): TransactionCoordinatorTest and
ProducerStateManagerTest tests added after 1eb7644, read at the release tags 4.0.0, 4.1.0 and 4.2.0-rc1, pinned per
profile, and what their comparison rests on."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from conform_pins import FROM_4_0_0, FROM_4_1_0, assert_coverage_table_names_vectors, assert_pinned, profiles_with
from eoscheck.model.api.protocol import PROFILES, client_tv2, protocol, with_eos
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors

MORE7 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more7.json"
# the vectors whose metadata is at transaction version 2 (client_transaction_version 2)
TV2 = ("SM-101", "SM-102", "SM-103", "SM-104", "SM-105", "SM-106", "SM-109", "SM-110", "SM-115", "SM-116", "SM-117",
       "SM-118", "SM-120", "SM-121", "SM-122", "SM-123")
#: KAFKA-19367 (4.0.1, 4.1.0): a TV2 fence-abort whose append fails leaves the epoch and no hasFailedEpochFence
#: (kafka.eos's ``tv2_failed_fence_leaves_epoch``, from kafka-4.0.1 on); the 2024-10 snapshot and kafka-4.0.0 install
#: the fenced epoch in memory and set the flag (1eb7644 and 4.0.0 TransactionCoordinator.endTransaction), so SM-123
#: (read at 4.1.0) disagrees there
KAFKA_19367 = {"SM-123": "KAFKA-19367's failed TV2 fence-abort (4.0.1, 4.1.0)"}
#: KAFKA-19367's tests at the epoch boundary (shouldNotCauseEpochOverflowWhenInitPidDuringOngoingTxnV2,
#: shouldHandleTimeoutAtEpochOverflowBoundaryCorrectlyTV2: added by PR 19958 to the 4.0 branch, first tag 4.0.1; read at
#: 4.1.0): a fence-abort at Short.MaxValue - 1 of TV2 metadata ends at Short.MaxValue
KAFKA_19367_BOUNDARY = ("SM-121", "SM-122")
#: the vectors with a WriteTxnMarker at transaction_version 2: a version without TV2 has no such marker (session 22:
#: the harness reads the field since KAFKA-19446 (kafka.eos's ``tv2_marker_epoch_check``), and a profile lacking TV2 no longer agrees by ignoring it)
TV2_MARKER = ("PROD-101", "PROD-106", "PROD-108")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    disagree: dict[str, str] = {}
    inexpressible: dict[str, str] = {}
    if "transaction-version-2" in p.lacks:
        inexpressible.update({v: "transaction-version-2" for v in TV2 + TV2_MARKER})
    elif p.end_txn == "snapshot-2024-10":
        # before 4.0's EndTxn (KAFKA-14563's follow-ups): no TV2 empty abort from an ended state, no TV2 retry epoch,
        # and before KAFKA-18660 (the rotation's answer, AddPartitions' pending check first)
        disagree.update({v: "TV2 EndTxn of 4.0" for v in ("SM-101", "SM-105", "SM-109", "SM-115", "SM-117", "SM-118")})
    if "transaction-version-2" not in p.lacks and not p.eos.tv2_failed_fence_leaves_epoch:
        disagree.update(KAFKA_19367)
    if client_tv2(p) and p.eos.tv2_fence_double_bump:
        # 4.0.0's TV2 fence-abort at Short.MaxValue - 1 installs Short.MaxValue and bumps again: the epoch wraps to
        # -32768; KAFKA-19367's tests (first tag 4.0.1) assert one bump, to Short.MaxValue
        disagree.update({v: "4.0.0's double bump at the epoch boundary" for v in KAFKA_19367_BOUNDARY})
    if "kip-890-verification" in p.lacks:
        inexpressible.update({v: "kip-890-verification" for v in ("PROD-102", "PROD-103", "PROD-104", "PROD-105",
                                                                  "PROD-107", "PROD-108")})
    elif not p.eos.tv2_new_producer_sequence_zero:
        # KAFKA-18202 (PR 19902, first tag 4.1.0): a TV2 verification entry (supportsEpochBump) and no producer state
        # need sequence 0; the profiles before 4.1 accept any sequence from a producer without state, as their
        # versions do (before 4.0 there is no TV2 client at all)
        disagree["PROD-104"] = "before KAFKA-18202"
    if p.eos.verification_rejects_lower_epoch and not p.eos.stale_epoch_before_verification:
        # 4.1.0 has KAFKA-18042 but not KAFKA-19690, whose tests these are (added with it: 4.1.1, 4.2.0-rc1): the
        # stale verification start throws and leaves no guard (an answer the vector does not compare), and the
        # unguarded append is INVALID_TXN_STATE, the guard being checked before the epoch
        disagree.update({v: "KAFKA-18042 without KAFKA-19690 (4.1.0)" for v in ("PROD-107", "PROD-108")})
    if "kip-588" in p.lacks:
        # PRODUCER_FENCED is KIP-588's (2.7); before it EndTxn answers INVALID_PRODUCER_EPOCH
        disagree.update({v: "INVALID_PRODUCER_EPOCH before KIP-588" for v in ("SM-108", "SM-112", "SM-114")})
    return disagree, inexpressible


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more7_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE7), name, disagree, inexpressible)


def test_the_derived_pins() -> None:
    assert _derived("kafka-later-trunk") == ({}, {}) == _derived("kafka-4.2") == _derived("kafka-4.1.1")
    assert set(_derived("kafka-4.1.0")[0]) == {"PROD-107", "PROD-108"}
    assert set(_derived("kafka-4.0.1")[0]) == {"PROD-104"}
    assert set(_derived("kafka-4.0.0")[0]) == {"PROD-104", "SM-121", "SM-122", "SM-123"}
    assert set(_derived("kafka-2024-10")[0]) == {"SM-101", "SM-105", "SM-109", "SM-115", "SM-117", "SM-118", "SM-123",
                                                 "PROD-104"}
    assert set(_derived("kafka-3.8-3.9")[1]) == set(TV2 + TV2_MARKER)
    assert set(_derived("kafka-3.8-3.9")[0]) == {"PROD-104"}
    assert set(_derived("kafka-2.6")[0]) == {"SM-108", "SM-112", "SM-114"}
    assert set(_derived("kafka-3.3-3.5")[1]) == set(TV2 + TV2_MARKER) | {"PROD-102", "PROD-103", "PROD-104", "PROD-105",
                                                                         "PROD-107"}


def _run_changed(vid: str, change, variant: str = "kafka-later-trunk") -> str:
    data = json.loads(MORE7.read_text())
    data["vectors"] = [copy.deepcopy(v) for v in data["vectors"] if v["id"] == vid]
    change(data["vectors"][0])
    (v,) = harness.run_file(parse_vectors(data), variant).vectors
    return v.outcome


def test_kafka_18660_in_the_conformance_interface(monkeypatch: pytest.MonkeyPatch) -> None:
    """SM-117 and SM-118 agree because of KAFKA-18660 (kafka.eos's ``add_partitions_pending_first`` and
    ``tv2_rotation_answer_next_producer_id``, read through ``Protocol.eos``): without it (the 4.0 trunk before January 30, 2025) a TV2
    rotation answers the old producer id with the exhausted epoch, and an add under the new producer id while the
    completion is pending is INVALID_PRODUCER_ID_MAPPING; a PrepareCommit with nothing pending (written.json's SM-24,
    4.0.0's test too) is still checked for the epoch first."""
    doc, later = PROFILES["kafka-later-trunk"]
    halves = ("add_partitions_pending_first", "tv2_rotation_answer_next_producer_id")
    assert all(getattr(later.eos, h) for h in halves)
    assert profiles_with(lambda p: p.eos.add_partitions_pending_first) == FROM_4_0_0
    monkeypatch.setitem(PROFILES, "kafka-later-trunk", (doc, with_eos(later, **dict.fromkeys(halves, False))))
    assert _run_changed("SM-117", lambda v: None) == harness.DISAGREE
    assert _run_changed("SM-118", lambda v: None) == harness.DISAGREE
    monkeypatch.undo()
    assert _run_changed("SM-117", lambda v: None) == harness.AGREE
    # with nothing pending the producer id is checked first, as before
    assert _run_changed("SM-118", lambda v: v["initial_state"]["txn_metadata"].update(pending_state=None)) == \
        harness.DISAGREE


def test_kafka_19367_in_the_conformance_interface(monkeypatch: pytest.MonkeyPatch) -> None:
    """SM-123 agrees because of ``tv2_failed_fence_leaves_epoch``: without it (4.0.0, the 2024-10 snapshot) the
    failed fence leaves the fenced epoch 2 in memory with hasFailedEpochFence, which the first step's state_after
    refutes; with it, the same failure at TV1 (a TV1 server: the metadata's version stands for it) still keeps
    KAFKA-9666's fenced epoch, so the switch is the TV2 path's only."""
    doc, later = PROFILES["kafka-later-trunk"]
    assert later.eos.tv2_failed_fence_leaves_epoch
    assert profiles_with(lambda p: p.eos.tv2_failed_fence_leaves_epoch) == FROM_4_0_0 - {"kafka-4.0.0"}
    assert _run_changed("SM-123", lambda v: None) == harness.AGREE
    monkeypatch.setitem(PROFILES, "kafka-later-trunk", (doc, with_eos(later, tv2_failed_fence_leaves_epoch=False)))
    assert _run_changed("SM-123", lambda v: None) == harness.DISAGREE
    # 4.0.0's outcome of the first step is what the disagreement is: the fenced epoch and the flag
    assert _run_changed("SM-123", lambda v: v["steps"][0]["expected"]["state_after"].update(
        producer_epoch=2, has_failed_epoch_fence=True)) == harness.AGREE
    monkeypatch.undo()

    def tv1(v: dict) -> None:
        v["initial_state"]["txn_metadata"]["client_transaction_version"] = 0
        v["steps"] = v["steps"][:1]

    assert _run_changed("SM-123", tv1) == harness.DISAGREE
    assert _run_changed("SM-123", lambda v: (tv1(v), v["steps"][0]["expected"]["state_after"].update(
        producer_epoch=2, has_failed_epoch_fence=True))) == harness.AGREE


def test_kafka_18202_in_the_conformance_interface(monkeypatch: pytest.MonkeyPatch) -> None:
    """PROD-104 agrees because of KAFKA-18202 (kafka.eos's ``tv2_new_producer_sequence_zero``) (the TV2 entry's sequence-0 check, 4.1.0), and only through the
    entry's ``supports_epoch_bump``: without the switch, or with a TV1 entry (PROD-105's form), the batch at
    sequence 3 is appended; PROD-103 (a TV2 entry at lowest sequence 0) is refused by either check."""
    doc, later = PROFILES["kafka-later-trunk"]
    assert later.eos.tv2_new_producer_sequence_zero and later.eos.verification_rejects_lower_epoch
    assert profiles_with(lambda p: p.eos.tv2_new_producer_sequence_zero) == FROM_4_1_0
    assert profiles_with(lambda p: p.eos.verification_rejects_lower_epoch) == FROM_4_1_0
    assert _run_changed("PROD-104", lambda v: None) == harness.AGREE
    # a TV1 entry: the old rule, the batch is appended, which PROD-104 does not expect
    assert _run_changed("PROD-104", lambda v: v["steps"][0]["input"].update(supports_epoch_bump=False)) == \
        harness.DISAGREE
    # a TV2 entry at lowest sequence 5 and a batch at 5: only KAFKA-18202's check refuses it
    assert _run_changed("PROD-103", lambda v: (
        v["initial_state"]["verification_state"]["1"].update(lowest_sequence=5))) == harness.AGREE
    monkeypatch.setitem(PROFILES, "kafka-later-trunk", (doc, with_eos(later, tv2_new_producer_sequence_zero=False)))
    assert _run_changed("PROD-104", lambda v: None) == harness.DISAGREE
    assert _run_changed("PROD-103", lambda v: (
        v["initial_state"]["verification_state"]["1"].update(lowest_sequence=5))) == harness.DISAGREE


def test_kafka_18042_answers_the_stale_verification_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """PROD-108's second verification (epoch 3 after the TV2 marker at 4) throws InvalidProducerEpochException with
    KAFKA-18042 (kafka.eos's ``verification_rejects_lower_epoch``, 4.1.0's maybeStartTransactionVerification) and creates no entry; without it the entry is updated
    and the append answers the same error (KAFKA-19690), so the vector agrees either way."""
    def expect_refused(v: dict) -> None:
        v["steps"][3]["expected"].update(result="REJECTED", error="INVALID_PRODUCER_EPOCH",
                                         verification_entry_present=False)
    assert _run_changed("PROD-108", expect_refused) == harness.AGREE
    assert _run_changed("PROD-108", lambda v: None) == harness.AGREE
    doc, later = PROFILES["kafka-later-trunk"]
    monkeypatch.setitem(PROFILES, "kafka-later-trunk", (doc, with_eos(later, verification_rejects_lower_epoch=False)))
    assert _run_changed("PROD-108", expect_refused) == harness.DISAGREE
    assert _run_changed("PROD-108", lambda v: None) == harness.AGREE


def test_the_comparisons_can_fail() -> None:
    # at TV1 the abort of an Empty transaction is refused, so SM-101's NONE and epoch bump would not hold
    assert _run_changed("SM-101", lambda v: (v["initial_state"]["txn_metadata"].update(client_transaction_version=0),
                                             v["steps"][0]["input"].update(client_transaction_version=0))) == \
        harness.DISAGREE
    # the TV2 retry of a completed abort writes nothing: expecting a record fails
    assert _run_changed("SM-106", lambda v: v["steps"][0]["expected"].update(txn_log_append={"producer_epoch": 1})) == \
        harness.DISAGREE
    # a TV2 COMMIT retry of a committed transaction at the current epoch is not a retry
    assert _run_changed("SM-116", lambda v: v["steps"][0]["input"].update(producer_epoch=1)) == harness.DISAGREE
    # at the same epoch 0 a batch continuing at sequence 3 is accepted: the refusal is the new epoch's
    assert _run_changed("PROD-100", lambda v: v["steps"][3]["input"].update(producer_epoch=0, base_sequence=3,
                                                                             last_sequence=3)) == \
        harness.DISAGREE
    # a marker at an older epoch than the entry's is fenced, so the retry's epoch matters
    assert _run_changed("PROD-101", lambda v: v["steps"][2]["input"].update(producer_epoch=0)) == harness.DISAGREE
    # a commit marker at an epoch below the batch's is fenced: the bumped TV2 marker is what is accepted
    assert _run_changed("PROD-106", lambda v: v["steps"][1]["input"].update(producer_epoch=4)) == harness.DISAGREE
    # the same batch at the current epoch 6 is a new transaction, not a stale one
    assert _run_changed("PROD-107", lambda v: (v["steps"][3]["input"].update(producer_epoch=6),
                                               v["steps"][4]["input"].update(producer_epoch=6))) == harness.DISAGREE
    # with the verification entry's lowest sequence below 5 (KIP-890: a later first batch) the batch at 5 is refused
    assert _run_changed("PROD-102", lambda v: v["initial_state"]["verification_state"]["2"].update(
        lowest_sequence=4)) == harness.DISAGREE


def test_the_file_names_tests_no_other_file_covers_with_their_tags() -> None:
    data = json.loads(MORE7.read_text())
    assert data["counts"]["total"] == len(data["vectors"]) == 33
    assert all(v["source"]["tag"] in ("4.0.0", "4.1.0", "4.2.0-rc1") for v in data["vectors"])
    tests = {v["source"]["test"] for v in data["vectors"]}
    assert len(tests) == 23
    for other in ("sample", "written", "client", "broker", "more", "more2", "more3", "more4", "more5", "more6"):
        earlier = json.loads((MORE7.parent / f"kafka-unit-test-vectors.{other}.json").read_text())
        assert not tests & {v["source"]["test"] for v in earlier["vectors"]}, other
        assert not {v["id"] for v in data["vectors"]} & {v["id"] for v in earlier["vectors"]}, other


def test_the_coverage_table_names_the_vectors() -> None:
    assert_coverage_table_names_vectors(MORE7)


def test_kafka_19367_double_bump_at_the_epoch_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    """SM-121 and SM-122 (KAFKA-19367's boundary tests, first tag 4.0.1, read at 4.1.0) tell kafka-4.0.0 from every
    later profile: 4.0.0's TV2 fence-abort installs the fenced epoch and ``prepareAbortOrCommit`` bumps it again, so at
    Short.MaxValue - 1 the epoch wraps to -32768 (a Java short); kafka.eos's ``tv2_fence_double_bump`` off, the same
    fence ends at Short.MaxValue. The 2024-10 snapshot's fence is the TV1 one (its kafka.eos variant has no TV2)."""
    for vid in KAFKA_19367_BOUNDARY:
        for name in ("kafka-4.0.1", "kafka-4.1.0", "kafka-4.2", "kafka-later-trunk", "kafka-2024-10"):
            assert _run_changed(vid, lambda v: None, name) == harness.AGREE, (vid, name)
        assert _run_changed(vid, lambda v: None, "kafka-4.0.0") == harness.DISAGREE
        assert _run_changed(vid, lambda v: v["steps"][0]["expected"]["state_after"].update(producer_epoch=-32768),
                            "kafka-4.0.0") == harness.AGREE
        # one epoch lower the double bump does not wrap: Short.MaxValue - 2 ends at Short.MaxValue under 4.0.0 only
        def lower(v: dict) -> None:
            v["initial_state"]["txn_metadata"]["producer_epoch"] = 32765
        assert _run_changed(vid, lower, "kafka-4.0.0") == harness.AGREE
        assert _run_changed(vid, lower, "kafka-4.0.1") == harness.DISAGREE
    doc, first = PROFILES["kafka-4.0.0"]
    monkeypatch.setitem(PROFILES, "kafka-4.0.0", (doc, with_eos(first, tv2_fence_double_bump=False,
                                                                tv2_failed_fence_leaves_epoch=True)))
    for vid in KAFKA_19367_BOUNDARY:
        assert _run_changed(vid, lambda v: None, "kafka-4.0.0") == harness.AGREE
