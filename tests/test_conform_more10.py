"""Session 23's vectors (``tests/data/kafka-unit-test-vectors.more10.json``): TransactionMetadataTest's fence at
Short.MaxValue read at the release tags 4.0.0, 4.1.0 and 4.2.0-rc1, the rule that tells the 4.x release profiles from
kafka-later-trunk (KAFKA-20090), pinned per profile; and the profile a default run judges a vector under, chosen by its
``source.tag``."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conform_pins import FROM_4_0_0, assert_coverage_table_names_vectors, assert_pinned, outcome_totals
from eoscheck.model.api.protocol import PROFILE_TABLE, PROFILES, profile_for_tag, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors

DATA = Path(__file__).parent / "data"
MORE10 = DATA / "kafka-unit-test-vectors.more10.json"
VECTORS = ("INIT-70", "INIT-71", "INIT-72")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    # only KAFKA-20090 (after 4.2.0-rc1) keeps the epoch; every release from 2.0 throws
    if protocol(name).fence_at_max_epoch == "keep":
        return dict.fromkeys(VECTORS, "KAFKA-20090: a fence at Short.MaxValue keeps the epoch"), {}
    return {}, {}


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more10_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE10), name, disagree, inexpressible)


def test_the_derived_pins() -> None:
    assert set(_derived("kafka-later-trunk")[0]) == set(VECTORS)
    assert all(_derived(n) == ({}, {}) for n in PROFILE_TABLE if n != "kafka-later-trunk")
    # kafka-4.2 and kafka-later-trunk differ in nothing else: these vectors are what tells them apart
    a, b = protocol("kafka-4.2"), protocol("kafka-later-trunk")
    assert a.eos == b.eos and a._replace(name="", fence_at_max_epoch="keep") == b._replace(name="")


def _run_changed(vid: str, change: Callable[[dict], object], variant: str | None) -> str:
    data = json.loads(MORE10.read_text())
    data["vectors"] = [copy.deepcopy(v) for v in data["vectors"] if v["id"] == vid]
    change(data["vectors"][0])
    (v,) = harness.run_file(parse_vectors(data), variant).vectors
    return v.outcome


def test_the_comparisons_can_fail() -> None:
    for vid in VECTORS:
        # one epoch lower the fence bumps to Short.MaxValue: no exception
        def lower(v: dict) -> None:
            v["initial_state"]["txn_metadata"]["producer_epoch"] = 32766
        assert _run_changed(vid, lower, None) == harness.DISAGREE
        # a pending transition throws too, whatever the epoch: the exception is not the epoch check's alone
        assert _run_changed(vid, lambda v: v["initial_state"]["txn_metadata"].update(
            producer_epoch=5, pending_state="PrepareCommit"), None) == harness.AGREE
        # a CompleteCommit cannot go to PrepareEpochFence (the valid-previous-states check)
        assert _run_changed(vid, lambda v: (lower(v), v["initial_state"]["txn_metadata"].update(
            state="CompleteCommit")), None) == harness.AGREE


def test_a_default_run_judges_each_vector_under_its_tags_profile() -> None:
    """The file's commit is 4.0.0's; a vector read at 4.1.0 or 4.2.0-rc1 is judged under that release's profile
    (``harness.vector_variant``), and a tag no profile stands for leaves the file's. Were INIT-72 judged under
    kafka-later-trunk (the profile the file's commit date picked before session 23), it would disagree."""
    run = harness.run_file(load_vectors(MORE10))
    assert run.variant == "kafka-4.0.0"
    assert run.chosen_by == "commit 985bc99521dd; by source.tag: kafka-4.1.0 1, kafka-4.2 1"
    assert {v.id: v.variant for v in run.vectors} == {"INIT-70": "kafka-4.0.0", "INIT-71": "kafka-4.1.0",
                                                      "INIT-72": "kafka-4.2"}
    assert all(v.outcome == harness.AGREE for v in run.vectors)
    assert _run_changed("INIT-72", lambda v: None, "kafka-later-trunk") == harness.DISAGREE
    assert _run_changed("INIT-72", lambda v: v["source"].update(tag="trunk"), None) == harness.AGREE
    data = json.loads(MORE10.read_text())
    data["source"] = {"repository": "apache/kafka", "commit_date": "2026-03-01"}
    data["vectors"][2]["source"]["tag"] = "4.9.9"
    run = harness.run_file(parse_vectors(data))
    assert [v.variant for v in run.vectors] == ["kafka-4.0.0", "kafka-4.1.0", "kafka-later-trunk"]
    assert [v.outcome for v in run.vectors] == [harness.AGREE, harness.AGREE, harness.DISAGREE]
    # --variant judges every vector under the one profile named
    run = harness.run_file(load_vectors(MORE10), "kafka-later-trunk")
    assert {v.variant for v in run.vectors} == {"kafka-later-trunk"} and run.chosen_by == "--variant"
    assert harness.to_json(run)["vectors"][0]["variant"] == "kafka-later-trunk"


#: session 19-22's files read at 4.x tags: their default runs, each vector under its tag's profile (before session 23
#: all of them were judged under kafka-later-trunk, by the file's commit date; no outcome moved); more8's CLI-156 and
#: CLI-157 agree since session 26 wrote them with structured ApiVersions steps (19/0/3 before)
_TAGGED_DEFAULTS = {"more7": (33, 0, 0), "more8": (21, 0, 1), "more9": (8, 0, 1)}


@pytest.mark.parametrize("name", list(_TAGGED_DEFAULTS))
def test_the_tagged_files_default_runs(name: str) -> None:
    raw = json.loads((DATA / f"kafka-unit-test-vectors.{name}.json").read_text())
    tags = {v["id"]: v["source"]["tag"] for v in raw["vectors"]}
    run = harness.run_file(load_vectors(DATA / f"kafka-unit-test-vectors.{name}.json"))
    assert run.variant == "kafka-4.0.0" and run.chosen_by.startswith("commit 985bc99521dd; by source.tag: ")
    assert {v.id: v.variant for v in run.vectors} == {vid: profile_for_tag(t) for vid, t in tags.items()}
    assert {v.variant for v in run.vectors} <= FROM_4_0_0
    agree, disagree, inexpressible = _TAGGED_DEFAULTS[name]
    assert outcome_totals(run) == {harness.AGREE: agree, harness.DISAGREE: disagree,
                                   harness.NOT_EXPRESSIBLE: inexpressible}


def test_the_file_reads_one_test_at_three_tags() -> None:
    data = json.loads(MORE10.read_text())
    assert data["counts"]["total"] == len(data["vectors"]) == 3
    assert [v["source"]["tag"] for v in data["vectors"]] == ["4.0.0", "4.1.0", "4.2.0-rc1"]
    assert {v["source"]["test"] for v in data["vectors"]} == {"testFenceProducerNotAllowedIfItWouldOverflow"}
    # written.json's INIT-28 is the same test at 1eb7644, with no tag: judged under kafka-2024-10
    written = {v["id"]: v for v in json.loads((DATA / "kafka-unit-test-vectors.written.json").read_text())["vectors"]}
    assert written["INIT-28"]["source"]["test"] == "testFenceProducerNotAllowedIfItWouldOverflow"
    assert "tag" not in written["INIT-28"]["source"]
    for other in ("sample", "written", "client", "broker", "more", "more2", "more3", "more4", "more5", "more6",
                  "more7", "more8", "more9"):
        earlier = json.loads((DATA / f"kafka-unit-test-vectors.{other}.json").read_text())
        assert not {v["id"] for v in data["vectors"]} & {v["id"] for v in earlier["vectors"]}, other


def test_the_coverage_table_names_the_vectors() -> None:
    assert_coverage_table_names_vectors(MORE10)
