"""Session 22's vectors (``tests/data/kafka-unit-test-vectors.more9.json``): the KafkaApisTest WriteTxnMarkers and
OffsetMetadataManagerTest tests session 21 listed as unread and the ReplicaManagerTest verification tests added after
1eb7644, read at the release tags 4.0.0, 4.1.0 and 4.2.0-rc1, pinned per profile, and the switch and harness inputs
their agreement rests on."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conform_pins import FROM_4_0_0, assert_coverage_table_names_vectors, assert_pinned, profiles_with
from eoscheck.model.api.protocol import PROFILES, protocol, with_eos
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors

MORE9 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more9.json"
#: a TV2 marker or a TV2 (ADD_PARTITION) produce request: not in a version without transaction version 2
TV2 = ("BRK-KA-30-tv2", "BRK-KA-32", "BRK-RM-22", "BRK-RM-23", "BRK-RM-23-concurrent")
VERIFIED = ("BRK-RM-21", "BRK-RM-22", "BRK-RM-23", "BRK-RM-23-concurrent")
#: always out: ReplicaManager's scheduled retry of a TV2 add answered CONCURRENT_TRANSACTIONS (KAFKA-18654 [2/2])
OUT = {"BRK-RM-23-concurrent": "the scheduled retry"}


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    disagree: dict[str, str] = {}
    inexpressible: dict[str, str] = dict(OUT)
    if "transaction-version-2" in p.lacks:
        inexpressible.update({v: "transaction-version-2" for v in TV2})
    elif p.eos.tv2_marker_epoch_check == "lenient":
        disagree["BRK-KA-30-tv2"] = "before KAFKA-19446: a TV2 marker at the producer's epoch is appended"
    if "kip-890-verification" in p.lacks:
        inexpressible.update({v: "kip-890-verification" for v in VERIFIED})
    if "kip-447" in p.lacks:
        inexpressible["BRK-OMM-20"] = "kip-447"
    return disagree, inexpressible


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more9_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE9), name, disagree, inexpressible)


def test_the_derived_pins() -> None:
    assert _derived("kafka-later-trunk") == ({}, OUT)
    assert _derived("kafka-2024-10")[0].keys() == {"BRK-KA-30-tv2"}
    assert set(_derived("kafka-3.8-3.9")[1]) == set(TV2) and not _derived("kafka-3.8-3.9")[0]
    assert set(_derived("kafka-3.3-3.5")[1]) == set(TV2) | set(VERIFIED)
    # the TV1 marker and the old coordinator's marker agree in every profile
    d, i = _derived("kafka-2.0.0")
    assert not d and {"BRK-KA-30-tv1", "BRK-KA-31"}.isdisjoint(i) and len(i) == 7


def _run_changed(vid: str, change: Callable[[dict], object], variant: str = "kafka-later-trunk") -> str:
    data = json.loads(MORE9.read_text())
    data["vectors"] = [copy.deepcopy(v) for v in data["vectors"] if v["id"] == vid]
    change(data["vectors"][0])
    (v,) = harness.run_file(parse_vectors(data), variant).vectors
    return v.outcome


def _same(v: dict) -> None:
    pass


def test_the_tv2_marker_epoch_check_is_what_the_tv2_marker_agrees_by(monkeypatch: pytest.MonkeyPatch) -> None:
    """kafka.eos's ``tv2_marker_epoch_check`` (KAFKA-19446 / KAFKA-19999, first tag 4.2.0-rc1) is strict-retry in
    ``kafka-4.2`` and ``kafka-later-trunk`` only; lenient there, the TV2 marker at the producer's epoch is an append
    (the TV0 check, epoch >= current), and the TV1 vector does not move. BRK-KA-30-tv2 (read at 4.2.0-rc1) is what
    tells kafka-4.2 from 4.0.0 .. 4.1.1 (``_derived``)."""
    doc, later = PROFILES["kafka-later-trunk"]
    assert later.eos.tv2_marker_epoch_check == "strict-retry"
    assert profiles_with(lambda p: p.eos.tv2_marker_epoch_check != "lenient") == {"kafka-later-trunk", "kafka-4.2"}
    assert _derived("kafka-4.1.1")[0].keys() == _derived("kafka-4.0.0")[0].keys() == {"BRK-KA-30-tv2"}
    assert profiles_with(lambda p: "transaction-version-2" not in p.lacks) == FROM_4_0_0 | {"kafka-2024-10"}
    assert _run_changed("BRK-KA-30-tv2", _same) == harness.AGREE
    monkeypatch.setitem(PROFILES, "kafka-later-trunk", (doc, with_eos(later, tv2_marker_epoch_check="lenient")))
    assert _run_changed("BRK-KA-30-tv2", _same) == harness.DISAGREE
    assert _run_changed("BRK-KA-30-tv1", _same) == harness.AGREE


def test_the_comparisons_can_fail() -> None:
    # KAFKA-19999: a TV2 marker at the epoch with no transaction open is a retry, written again
    assert _run_changed("BRK-KA-30-tv2", lambda v: v["initial_state"]["producers"]["1"].pop("txn_first_offset")) == \
        harness.DISAGREE
    # a TV2 marker above the epoch (the coordinator's bump) is written
    assert _run_changed("BRK-KA-30-tv2", lambda v: v["steps"][0]["input"].update(producer_epoch=6)) == harness.DISAGREE
    # the TV1 check is epoch < current: a TV1 marker at the epoch is written
    assert _run_changed("BRK-KA-30-tv1", lambda v: v["steps"][0]["input"].update(producer_epoch=5)) == harness.DISAGREE
    # the new coordinator passes NOT_CONTROLLER through; only the old one answers UNKNOWN_SERVER_ERROR for any error
    assert _run_changed("BRK-KA-31", lambda v: v["steps"][1]["input"].update(
        group_coordinator="new", group_coordinator_error="REQUEST_TIMED_OUT")) == harness.DISAGREE
    assert _run_changed("BRK-KA-31", lambda v: v["steps"][1]["input"].update(group_coordinator="neither")) == \
        harness.NOT_EXPRESSIBLE
    # REQUEST_TIMED_OUT is passed through, not made NOT_LEADER_OR_FOLLOWER
    assert _run_changed("BRK-KA-32", lambda v: v["steps"][3]["expected"].update(
        error="NOT_LEADER_OR_FOLLOWER", error_code=6)) == harness.DISAGREE
    # a verification that succeeds appends the batch
    assert _run_changed("BRK-RM-23", lambda v: v["steps"][1]["input"].update(
        verification_callback_error="NONE")) == harness.DISAGREE
    # CONCURRENT_TRANSACTIONS answering a TV1 verification is converted at once (BRK-RM-21's second parameter)
    assert _run_changed("BRK-RM-23-concurrent", lambda v: v["steps"][0]["input"].pop(
        "transaction_supported_operation")) == harness.DISAGREE
    assert _run_changed("BRK-RM-22", lambda v: v["steps"][0]["input"].update(
        transaction_supported_operation="somethingElse")) == harness.NOT_EXPRESSIBLE


def test_the_file_names_tests_no_other_file_covers_with_their_tags() -> None:
    data = json.loads(MORE9.read_text())
    assert data["counts"]["total"] == len(data["vectors"]) == 9
    assert all(v["source"]["tag"] in ("4.0.0", "4.1.0", "4.2.0-rc1") for v in data["vectors"])
    tests = {v["source"]["test"] for v in data["vectors"]}
    assert len(tests) == 7
    for other in ("sample", "written", "client", "broker", "more", "more2", "more3", "more4", "more5", "more6",
                  "more7", "more8"):
        earlier = json.loads((MORE9.parent / f"kafka-unit-test-vectors.{other}.json").read_text())
        assert not tests & {v["source"]["test"] for v in earlier["vectors"]}, other
        assert not {v["id"] for v in data["vectors"]} & {v["id"] for v in earlier["vectors"]}, other


def test_the_coverage_table_names_the_vectors() -> None:
    assert_coverage_table_names_vectors(MORE9)


def test_a_streams_group_is_not_taken_for_a_classic_one() -> None:
    """OffsetMetadataManagerTest's streams-group TxnOffsetCommit tests (4.2.0-rc1) are not in the model: a group of
    another type than classic or consumer is refused, not run as a classic group (the harness did so before)."""
    def streams(v: dict) -> None:
        v["initial_state"]["group"] = {"type": "streams", "members": {"member": {"member_epoch": 10}}}

    assert _run_changed("BRK-OMM-20", streams) == harness.NOT_EXPRESSIBLE
    assert _run_changed("BRK-OMM-20", lambda v: v["initial_state"].update(group={"type": "classic"})) != \
        harness.NOT_EXPRESSIBLE
