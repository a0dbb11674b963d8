"""Session 17's trunk vectors (``tests/data/kafka-unit-test-vectors.more5.json``): five tests of the trunk
TransactionMetadataTest.java (transaction-coordinator module) that 1eb7644's TransactionMetadataTest.scala did not
have, pinned per profile, and the fence's state check they led to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conform_pins import assert_pinned
from eoscheck.model.api import coordinator as coordinator_api
from eoscheck.model.api.protocol import COMMIT_PROFILES, PROFILES, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.state import TxnMetadata
from eoscheck.model.transactions.codes import TxnState

MORE5 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more5.json"
_TV2_ABORTS = ("SM-90", "SM-91", "SM-92")


def test_prepare_epoch_fence_follows_only_ongoing() -> None:
    for name in ("kafka-later-trunk", "kafka-2024-10", "kafka-2.5"):
        p = protocol(name)
        for state in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT, TxnState.PREPARE_COMMIT):
            meta = TxnMetadata(True, 23423, 23423, 32766, -1, int(state), False)
            assert coordinator_api.prepare_fence_producer_epoch(meta, p).exception == "IllegalStateException"
        ongoing = TxnMetadata(True, 23423, 23423, 32766, -1, int(TxnState.ONGOING), False)
        fenced = coordinator_api.prepare_fence_producer_epoch(ongoing, p)
        assert fenced.exception == "" and fenced.metadata.epoch == 32767


def test_the_file_picks_the_later_trunk_profile() -> None:
    assert COMMIT_PROFILES[json.loads(MORE5.read_text())["source"]["commit"]] == "kafka-later-trunk"
    run = harness.run_file(load_vectors(MORE5))
    assert run.variant == "kafka-later-trunk" and all(v.outcome == harness.AGREE for v in run.vectors)


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    if "transaction-version-2" in p.lacks:
        return {}, {v: "transaction-version-2" for v in _TV2_ABORTS}
    if p.end_txn != "later-trunk":
        # the 2024-10 snapshot's TransactionMetadata accepts PrepareAbort only from Ongoing / PrepareEpochFence
        return {v: "PrepareAbort from an ended TV2 transaction is later trunk's" for v in _TV2_ABORTS}, {}
    return {}, {}


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more5_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE5), name, disagree, inexpressible)


def test_the_derived_pins() -> None:
    assert _derived("kafka-later-trunk") == ({}, {})
    assert set(_derived("kafka-2024-10")[0]) == set(_TV2_ABORTS)
    assert set(_derived("kafka-3.8-3.9")[1]) == set(_TV2_ABORTS)


def test_the_file_names_tests_the_1eb7644_file_did_not_have() -> None:
    data = json.loads(MORE5.read_text())
    assert data["counts"]["total"] == len(data["vectors"]) == 5
    tests = {v["source"]["test"] for v in data["vectors"]}
    assert len(tests) == 5
    for other in ("sample", "written", "client", "broker", "more", "more2", "more3", "more4"):
        earlier = json.loads((MORE5.parent / f"kafka-unit-test-vectors.{other}.json").read_text())
        assert not tests & {v["source"]["test"] for v in earlier["vectors"]}, other
        assert not {v["id"] for v in data["vectors"]} & {v["id"] for v in earlier["vectors"]}, other
