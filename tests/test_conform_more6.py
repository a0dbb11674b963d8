"""Session 18's vectors (``tests/data/kafka-unit-test-vectors.more6.json``): three KafkaApisTest tests at 1eb7644 that
docs/conformance.md listed as touching the mechanisms without a row, pinned per profile, and what their comparison
rests on (KafkaApis' checks in front of the marker append and the group coordinator)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from conform_pins import KAFKA_COMMIT, assert_pinned
from eoscheck.model.api.protocol import PROFILES, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors

MORE6 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more6.json"


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    if "kip-447" in p.lacks:
        # the tests' TxnOffsetCommit names a member: KIP-447's request (2.5), which the older profiles lack
        return {}, {"TOC-60": "kip-447", "TOC-61": "kip-447"}
    if p.txn_offset_commit != "current":
        # the test mocks the group coordinator; before KAFKA-14201 (3.3.0) the model's refuses the member id of
        # an Empty group at generation -1 (UNKNOWN_MEMBER_ID) before the append that fails
        return {"TOC-61": "UNKNOWN_MEMBER_ID before the append (no Empty-group shortcut before 3.3)"}, {}
    return {}, {}


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more6_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE6), name, disagree, inexpressible)


def test_the_derived_pins() -> None:
    assert _derived("kafka-later-trunk") == ({}, {}) == _derived("kafka-3.3-3.5")
    assert set(_derived("kafka-2.5")[0]) == {"TOC-61"} == set(_derived("kafka-3.1.1-3.2")[0])
    assert _derived("kafka-2.4.1") == ({}, {"TOC-60": "kip-447", "TOC-61": "kip-447"})


def _run_changed(vid: str, change) -> str:
    data = json.loads(MORE6.read_text())
    data["vectors"] = [copy.deepcopy(v) for v in data["vectors"] if v["id"] == vid]
    change(data["vectors"][0])
    run = harness.run_file(parse_vectors(data), "kafka-later-trunk")
    (v,) = run.vectors
    return v.outcome


def test_the_comparisons_can_fail() -> None:
    # a log at format v1 is answered before the append (PROD-81's case), so 'appended' would be false
    assert _run_changed("PROD-90", lambda v: v["initial_state"].update(replica_magic={"t-0": 1})) == harness.DISAGREE
    # with a third partition of foo in the metadata cache, foo-2 reaches the group coordinator
    assert _run_changed("TOC-60", lambda v: v["initial_state"].update(metadata_cache={"foo": 3, "bar": 2})) == \
        harness.DISAGREE
    # the append answered NONE: the partition is committed, not refused
    assert _run_changed("TOC-61", lambda v: v["steps"][0]["input"].update(append_error="NONE")) == harness.DISAGREE
    # with zar in the metadata cache its partitions reach the group coordinator, which does not refuse them
    assert _run_changed("TOC-60", lambda v: v["initial_state"]["metadata_cache"].update(zar=2)) == harness.DISAGREE


def test_the_file_names_tests_no_other_file_covers() -> None:
    data = json.loads(MORE6.read_text())
    assert data["source"]["commit"] == KAFKA_COMMIT
    assert data["counts"]["total"] == len(data["vectors"]) == 3
    tests = {v["source"]["test"] for v in data["vectors"]}
    for other in ("sample", "written", "client", "broker", "more", "more2", "more3", "more4", "more5"):
        earlier = json.loads((MORE6.parent / f"kafka-unit-test-vectors.{other}.json").read_text())
        assert not tests & {v["source"]["test"] for v in earlier["vectors"]}, other
        assert not {v["id"] for v in data["vectors"]} & {v["id"] for v in earlier["vectors"]}, other


def test_the_coverage_table_names_the_vectors() -> None:
    """docs/conformance.md's coverage table has a row for each test of the file, naming its vector."""
    doc = (Path(__file__).parent.parent / "docs" / "conformance.md").read_text()
    for v in json.loads(MORE6.read_text())["vectors"]:
        rows = [line for line in doc.splitlines() if line.startswith("| ") and f"`{v['source']['test']}`" in line]
        assert len(rows) == 1 and rows[0].rstrip(" |").endswith(v["id"]), v["id"]
