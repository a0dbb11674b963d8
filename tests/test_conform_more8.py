"""Session 21's vectors (``tests/data/kafka-unit-test-vectors.more8.json``): the TransactionManagerTest, SenderTest,
UnifiedLogTest and ReplicaManagerTest tests added after 1eb7644 that docs/conformance.md listed as unread, read at
the release tags 4.0.0, 4.1.0 and 4.2.0-rc1, pinned per profile, and the switches their agreement rests on."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conform_pins import FROM_4_0_0, FROM_4_1_0, assert_coverage_table_names_vectors, assert_pinned, profiles_with
from eoscheck.model.api.protocol import PROFILES, client_tv2, protocol, with_eos
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors

MORE8 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more8.json"
#: a TV2 client (``producer.transaction_v2``): KAFKA-14563's paths, 4.0.0
TV2_CLIENT = ("CLI-150-tv2", "CLI-151", "CLI-152", "CLI-153", "CLI-154", "CLI-155-tv2", "CLI-158")
#: the TV1 / idempotent client vectors that read the interface's (KIP-360) producer client
KIP360_CLIENT = ("CLI-150-tv1", "CLI-155-tv1", "CLI-160", "CLI-161-load", "CLI-161-txnstate")
#: always out: appendAsLeader's argument check of an unknown version
OUT = {"PROD-112": "no marker transaction version"}
#: the producer's ApiVersions (more13's apiVersions steps, structured in session 26): the KIP-360 client's
#: coordinatorSupportsBumpingEpoch and 4.0's maybeUpdateTransactionV2Enabled(onInitialization)
API_VERSIONS = ("CLI-156", "CLI-157")
#: the 2024-10 snapshot's maybeUpdateTransactionV2Enabled() takes no onInitialization
NO_ARGUMENT = "the 2024-10 snapshot's maybeUpdateTransactionV2Enabled takes no argument"
VERIFIED = ("PROD-110", "PROD-111-tv1-client", "PROD-111-tv1-coordinator", "PROD-111-tv2-client",
            "PROD-111-tv2-coordinator", "BRK-RM-20")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    disagree: dict[str, str] = {}
    inexpressible: dict[str, str] = dict(OUT)
    if "kip-360" in p.lacks:
        inexpressible.update({v: "kip-360" for v in KIP360_CLIENT + TV2_CLIENT + API_VERSIONS if v != "CLI-154"})
        inexpressible["CLI-154"] = "TV2 client (KAFKA-14563)"
    else:
        if "transaction-version-2" in p.lacks:
            inexpressible.update(dict.fromkeys(API_VERSIONS, "transaction-version-2"))
        elif p.client_feature_check != "4.0":
            inexpressible.update(dict.fromkeys(API_VERSIONS, NO_ARGUMENT))
        if not client_tv2(p):
            inexpressible.update({v: "TV2 client (KAFKA-14563)" for v in TV2_CLIENT})
        if "transaction-abortable" in p.lacks:
            inexpressible["CLI-160"] = "transaction-abortable"
        elif not p.eos.client_abort_abortable_fatal:
            disagree["CLI-160"] = "before KAFKA-19250: an abort's TRANSACTION_ABORTABLE stays abortable"
        if not p.eos.client_batch_error_wrapped_abortable:
            disagree.update({v: "before KAFKA-19176: lastError is the produce error itself"
                             for v in ("CLI-161-load", "CLI-161-txnstate")})
    if "kip-890-verification" in p.lacks:
        inexpressible.update({v: "kip-890-verification" for v in VERIFIED})
    elif not p.eos.tv2_marker_keeps_verification:
        disagree["PROD-110"] = "before KAFKA-18654 [1/2]: every marker clears the verification entry"
    return disagree, inexpressible


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more8_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE8), name, disagree, inexpressible)


def test_the_derived_pins() -> None:
    assert _derived("kafka-later-trunk") == ({}, OUT)
    assert set(_derived("kafka-2024-10")[0]) == {"CLI-160", "CLI-161-load", "CLI-161-txnstate", "PROD-110"}
    assert set(_derived("kafka-2024-10")[1]) == set(OUT) | set(TV2_CLIENT) | set(API_VERSIONS)
    assert set(_derived("kafka-3.7")[0]) == {"CLI-161-load", "CLI-161-txnstate", "PROD-110"}
    assert set(_derived("kafka-3.3-3.5")[1]) == set(OUT) | set(TV2_CLIENT) | {"CLI-160"} | set(VERIFIED) | set(API_VERSIONS)
    assert not set(_derived("kafka-4.0.0")[1]) & set(API_VERSIONS)
    # before KIP-360 only the follower's marker (PROD-113) is expressible
    d, i = _derived("kafka-2.4.1")
    assert not d and len(i) == 21


def _run_changed(vid: str, change: Callable[[dict], object], variant: str = "kafka-later-trunk") -> str:
    data = json.loads(MORE8.read_text())
    data["vectors"] = [copy.deepcopy(v) for v in data["vectors"] if v["id"] == vid]
    change(data["vectors"][0])
    (v,) = harness.run_file(parse_vectors(data), variant).vectors
    return v.outcome


def _same(v: dict) -> None:
    pass


@pytest.mark.parametrize(("switch", "vectors", "profiles"), [
    ("client_batch_error_wrapped_abortable", ("CLI-161-load", "CLI-161-txnstate"), FROM_4_1_0),
    ("client_abort_abortable_fatal", ("CLI-160",), FROM_4_1_0),
    ("tv2_marker_keeps_verification", ("PROD-110",), FROM_4_0_0),
])
def test_each_switch_is_what_its_vectors_agree_by(monkeypatch: pytest.MonkeyPatch, switch: str,
                                                  vectors: tuple[str, ...], profiles: frozenset[str]) -> None:
    """Each of session 21's conformance switches, now kafka.eos's (``Protocol.eos``), is set in the profiles of the
    releases that have it (KAFKA-19176 and KAFKA-19250: 4.1.0; KAFKA-18654 [1/2]: 4.0.0) and later trunk only, and
    turning it off there makes its vectors disagree (the behaviour is the switch's, not the harness's)."""
    doc, later = PROFILES["kafka-later-trunk"]
    assert getattr(later.eos, switch)
    assert profiles_with(lambda p: getattr(p.eos, switch)) == profiles
    for vid in vectors:
        assert _run_changed(vid, _same) == harness.AGREE
    monkeypatch.setitem(PROFILES, "kafka-later-trunk", (doc, with_eos(later, **{switch: False})))
    for vid in vectors:
        assert _run_changed(vid, _same) == harness.DISAGREE, vid


def test_kafka_14562_end_txn_answer_is_kafka_eos_transaction_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """KAFKA-14562 [2/3]'s EndTxn answer (CLI-151, CLI-152) is kafka.eos's transaction version 2 (its client continues
    with EndTxn's producer id and epoch: ``producer.transactional.on_end_txn``), which only the variants of 4.0.0 and
    later set: at tv1 the vectors' TV2 client is not expressible."""
    doc, later = PROFILES["kafka-later-trunk"]
    assert profiles_with(client_tv2) == FROM_4_0_0
    for vid in ("CLI-151", "CLI-152"):
        assert _run_changed(vid, _same) == harness.AGREE
    monkeypatch.setitem(PROFILES, "kafka-later-trunk", (doc, with_eos(later, transaction_version="tv1")))
    for vid in ("CLI-151", "CLI-152"):
        assert _run_changed(vid, _same) == harness.NOT_EXPRESSIBLE, vid


def test_kafka_14563_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without KAFKA-14563 a vector's TV2 client is not expressible (1eb7644's client only recorded the version);
    with it, INVALID_PRODUCER_ID_MAPPING on produce is fatal at TV1 too (maybeTransitionToErrorState has no
    version check), and maybeAddPartition at TV1 still only queues the partition for AddPartitionsToTxn."""
    def tv1(v: dict) -> None:
        v["initial_state"]["producer"].pop("transaction_v2")

    assert _run_changed("CLI-153", tv1) == harness.AGREE
    assert _run_changed("CLI-154", tv1) == harness.DISAGREE
    doc, later = PROFILES["kafka-later-trunk"]
    monkeypatch.setitem(PROFILES, "kafka-later-trunk", (doc, with_eos(later, transaction_version="tv1")))
    assert _run_changed("CLI-154", _same) == harness.NOT_EXPRESSIBLE
    assert _run_changed("CLI-153", tv1) == harness.AGREE
    # the 3.x client (kafka.eos's client_produce_pid_mapping_fatal off): an abortable error
    monkeypatch.setitem(PROFILES, "kafka-later-trunk", (doc, with_eos(later, client_produce_pid_mapping_fatal=False)))
    assert _run_changed("CLI-153", tv1) == harness.DISAGREE
    assert _run_changed("CLI-153", lambda v: (tv1(v), v["steps"][0]["expected"].update(
        client_state="ABORTABLE_ERROR"))) == harness.AGREE


def test_the_comparisons_can_fail() -> None:
    # an EndTxn answer at TV2 sets the epoch it carries, not one more than the old
    assert _run_changed("CLI-151", lambda v: v["steps"][2]["input"].update(producer_epoch=5)) == harness.DISAGREE
    # the TV2 offsets are pending until the TxnOffsetCommit answer, which a failed answer does not complete
    assert _run_changed("CLI-158", lambda v: v["steps"][5]["input"].update(errors={"tp1": "UNKNOWN_MEMBER_ID"})) == \
        harness.DISAGREE
    # an expired batch with the coordinator unable to bump the epoch and TV1: a fatal error
    assert _run_changed("CLI-155-tv1", lambda v: v["initial_state"]["producer"].update(
        coordinator_supports_epoch_bump=False)) == harness.DISAGREE
    # TRANSACTION_ABORTABLE answering a commit stays abortable: expecting it fatal fails
    assert _run_changed("CLI-160", lambda v: v["steps"][2]["expected"].update(client_state="FATAL_ERROR")) == \
        harness.DISAGREE
    # a non-retriable, non-txn-state produce error (INVALID_PRODUCER_EPOCH) is not wrapped
    assert _run_changed("CLI-161-txnstate", lambda v: v["steps"][1]["input"].update(error="INVALID_PRODUCER_EPOCH")) \
        == harness.DISAGREE
    # a TV1 entry (no supportsEpochBump) goes with the marker
    assert _run_changed("PROD-110", lambda v: v["steps"][0]["input"].update(supports_epoch_bump=False)) == \
        harness.DISAGREE
    # a marker at another epoch than the TV2 entry's clears it
    assert _run_changed("PROD-110", lambda v: v["steps"][1]["input"].update(producer_epoch=2)) == harness.DISAGREE
    # the same epoch is not refused before verification: the lower one is
    assert _run_changed("BRK-RM-20", lambda v: v["steps"][2]["input"].update(producer_epoch=5)) == harness.DISAGREE
    # the follower applies the marker's bumped epoch: expecting the batch's epoch 5 fails
    assert _run_changed("PROD-113", lambda v: v["steps"][1]["expected"]["state_after"]["1"].update(epoch=5)) == \
        harness.DISAGREE


def test_the_file_names_tests_no_other_file_covers_with_their_tags() -> None:
    data = json.loads(MORE8.read_text())
    assert data["counts"]["total"] == len(data["vectors"]) == 22
    assert all(v["source"]["tag"] in ("4.0.0", "4.1.0", "4.2.0-rc1") for v in data["vectors"])
    tests = {v["source"]["test"] for v in data["vectors"]}
    assert len(tests) == 17
    for other in ("sample", "written", "client", "broker", "more", "more2", "more3", "more4", "more5", "more6",
                  "more7"):
        earlier = json.loads((MORE8.parent / f"kafka-unit-test-vectors.{other}.json").read_text())
        assert not tests & {v["source"]["test"] for v in earlier["vectors"]}, other
        assert not {v["id"] for v in data["vectors"]} & {v["id"] for v in earlier["vectors"]}, other


def test_the_coverage_table_names_the_vectors() -> None:
    assert_coverage_table_names_vectors(MORE8)
