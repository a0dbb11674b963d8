"""The check every vector file's per-profile pin makes: which vectors disagree, which are not
expressible, and that a vector is not expressible because its profile lacks a named feature; and the
two ways a file's pins are checked against every profile (listed, or derived from what a profile lacks)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from eoscheck.model.api.protocol import FEATURES, PROFILE_TABLE, PROFILES, Protocol, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import VectorFile, parse_vectors

#: the Kafka commit the written vector files were read at
KAFKA_COMMIT = "1eb7644349cb07139d6a3c1ad1986979647cac99"

#: the profiles of 4.0.0 and later releases, and of 4.1.0 and later: the sets a kafka.eos switch of those releases is
#: on in (``docs/kafka-versions.md``, "4.x release tags")
FROM_4_0_0 = frozenset({"kafka-later-trunk", "kafka-4.2", "kafka-4.1.1", "kafka-4.1.0", "kafka-4.0.1", "kafka-4.0.0"})
FROM_4_1_0 = FROM_4_0_0 - {"kafka-4.0.1", "kafka-4.0.0"}


def profiles_with(test: Callable[[Protocol], bool]) -> set[str]:
    """The profiles (aliases left out) whose switches pass ``test``."""
    return {name for name, p in PROFILE_TABLE.items() if test(p.protocol)}


#: a profile's pin: ({vector: why it disagrees}, {vector: the feature the version lacks, or why it is out})
Outcome = tuple[dict[str, str], dict[str, str]]


def assert_pinned(vf: VectorFile, name: str, disagree: Mapping[str, str], inexpressible: Mapping[str, str]) -> None:
    """Run ``vf`` under profile ``name``: exactly ``disagree`` disagree and ``inexpressible`` are not
    expressible; one whose reason is a feature says so, naming the profile (an alias reports the one
    it stands for), and the profile lacks that feature."""
    run = harness.run_file(vf, name)
    got = {v.id: v.outcome for v in run.vectors if v.outcome != harness.AGREE}
    want = {**{v: harness.DISAGREE for v in disagree}, **{v: harness.NOT_EXPRESSIBLE for v in inexpressible}}
    assert got == want, name
    p = protocol(name)
    for v in run.vectors:
        feature = inexpressible.get(v.id)
        if feature in FEATURES:
            assert v.reason.startswith(f"not expressible under {p.name}: ") and FEATURES[feature] in v.reason, \
                (name, v.id, v.reason)
            assert feature in p.lacks, (name, v.id, feature)


def assert_derived_matches_listed(listed: Mapping[str, Outcome], derived: Callable[[str], Outcome]) -> None:
    """``derived`` (the rule a file's pins follow) gives every listed profile its listed pin: the same
    disagreeing vectors (their reasons are prose) and the same inexpressible vectors and features."""
    for name, (disagree, inexpressible) in listed.items():
        d, i = derived(name)
        assert (set(d), i) == (set(disagree), inexpressible), name


def assert_pinned_per_profile(vf: VectorFile, listed: Mapping[str, Outcome], derived: Callable[[str], Outcome]) -> None:
    """``vf`` under every profile and alias: a listed profile gives its listed pin; one added later (a
    version split) is checked against what ``derived`` says it should give."""
    for name in PROFILES:
        disagree, inexpressible = listed.get(name) or derived(name)
        assert_pinned(vf, name, disagree, inexpressible)


def outcome_totals(run: harness.RunReport) -> dict[str, int]:
    """How many of ``run``'s vectors agree, disagree and are not expressible."""
    return {k: sum(1 for v in run.vectors if v.outcome == k)
            for k in (harness.AGREE, harness.DISAGREE, harness.NOT_EXPRESSIBLE)}


def vectors_by_id(path: Path) -> dict[str, dict]:
    """A vector file's vectors as raw dicts, by id (for tests that run a modified copy of one)."""
    return {v["id"]: v for v in json.loads(path.read_text())["vectors"]}


def run_vector(vector: dict, variant: str | None = None) -> harness.VectorReport:
    """One raw vector through the harness under ``variant`` (the default profile when None)."""
    data = {"source": {"repository": "apache/kafka", "commit": KAFKA_COMMIT}, "vectors": [vector]}
    (report,) = harness.run_file(parse_vectors(data, "inline"), variant).vectors
    return report


def coverage_rows(cls: str) -> dict[str, str]:
    """docs/conformance.md's coverage rows of Kafka test class ``cls``: test name -> the rest of its row (mechanism, and
    the vectors or "not covered: reason"); a test with two rows fails."""
    doc = (Path(__file__).parent.parent / "docs" / "conformance.md").read_text()
    rows: dict[str, str] = {}
    for line in doc.splitlines():
        m = re.match(rf"^\| {cls} \| `(\w+)` \| (.*)$", line)
        if m:
            assert m.group(1) not in rows, (cls, m.group(1))
            rows[m.group(1)] = m.group(2)
    return rows


def assert_coverage_table_names_vectors(path: Path) -> None:
    """docs/conformance.md's coverage table has one row per test of the vector file, ending with its vectors."""
    doc = (Path(__file__).parent.parent / "docs" / "conformance.md").read_text()
    by_test: dict[str, list[str]] = {}
    for v in json.loads(path.read_text())["vectors"]:
        by_test.setdefault(v["source"]["test"], []).append(v["id"])
    for test, ids in by_test.items():
        rows = [line for line in doc.splitlines() if line.startswith("| ") and f"`{test}`" in line]
        assert len(rows) == 1 and rows[0].rstrip(" |").endswith(", ".join(ids)), test
