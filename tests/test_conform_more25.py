"""Session 27's ``tests/data/kafka-unit-test-vectors.more25.json``: KafkaProducerTest's tests of how ``new
ProducerConfig`` settles enable.idempotence against acks, retries and max.in.flight.requests.per.connection (read at
1eb7644 and 4.2.0-rc1), pinned per profile; comparisons that can fail; the rule on its own."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from conform_pins import (
    assert_coverage_table_names_vectors,
    assert_pinned,
    outcome_totals,
    run_vector,
    vectors_by_id,
)
from eoscheck.model.api.protocol import PROFILE_TABLE, PROFILES, SWITCH_HISTORY, history_value, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.producer.idempotence_config import settle

MORE25 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more25.json"
CONFIG = ("CLI-400", "CLI-401", "CLI-402", "CLI-403", "CLI-404")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    rule = protocol(name).idempotence_config
    if rule == "unread":
        return {}, dict.fromkeys(CONFIG, "before KAFKA-13673 the idempotence defaults are not modelled")
    if rule == "4.0":
        return {"CLI-403": "KAFKA-17927 (4.0.0): 6 in flight is refused with a default idempotence"}, {}
    return {"CLI-404": "before KAFKA-17927 6 in flight turns a default idempotence off"}, {}


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more25_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE25), name, disagree, inexpressible)


def test_the_default_run_judges_each_vector_under_its_tag_and_agrees() -> None:
    run = harness.run_file(load_vectors(MORE25))
    assert outcome_totals(run) == {"agree": 5, "disagree": 0, "not expressible": 0}
    variants = {v.id: v.variant for v in run.vectors}
    assert {variants[v] for v in CONFIG[:4]} == {"kafka-2024-10"} and variants["CLI-404"] == "kafka-4.2"
    got = {n: tuple(outcome_totals(harness.run_file(load_vectors(MORE25), n)).values()) for n in PROFILE_TABLE}
    assert {n for n, t in got.items() if t == (0, 0, 5)} == {
        "kafka-3.0-3.1.0", "kafka-2.7-2.8", "kafka-2.6", "kafka-2.5", "kafka-2.4.1", "kafka-2.4.0", "kafka-2.0.1-2.3",
        "kafka-2.0.0"}
    assert all(t == (4, 1, 0) for t in got.values() if t != (0, 0, 5))


def test_the_switch_and_its_first_versions() -> None:
    assert SWITCH_HISTORY["idempotence_config"] == (((2, 0, 0), "unread"), ((3, 1, 1), "3.1.1"), ((4, 0, 0), "4.0"))
    for name, p in PROFILE_TABLE.items():
        assert history_value("idempotence_config", p.first) == history_value("idempotence_config", p.last) \
            == p.protocol.idempotence_config, name


def test_the_rule_on_its_own() -> None:
    six = {"max.in.flight.requests.per.connection": "6"}
    # a default idempotence is turned off before KAFKA-17927, refused after
    assert settle(six, "3.1.1").refused_by == "" and not settle(six, "3.1.1").enable_idempotence
    assert settle(six, "4.0").refused_by == "max.in.flight.requests.per.connection"
    # a user-set idempotence is refused at the first conflicting check: retries before acks before max.in.flight
    both = {"retries": "0", "acks": "1", "enable.idempotence": "true", **six}
    assert settle(both, "3.1.1").refused_by == settle(both, "4.0").refused_by == "retries"
    # retries 0 and 6 in flight with a default idempotence: turned off before 4.0.0, max.in.flight refused after
    r0 = {"retries": "0", **six}
    assert settle(r0, "3.1.1").refused_by == "" and settle(r0, "4.0").refused_by == "max.in.flight.requests.per.connection"
    # nothing set: idempotent, acks -1
    assert settle({}, "4.0")[:2] == (True, "-1")
    with pytest.raises(ValueError):
        settle({}, "unread")
    with pytest.raises(ValueError):
        settle({"acks": "2"}, "4.0")


def _changed(vid: str, step: int, props: dict[str, str], variant: str | None = None) -> str:
    v: dict[str, Any] = copy.deepcopy(vectors_by_id(MORE25)[vid])
    v["steps"][step]["input"]["props"] = props
    return run_vector(v, variant).outcome


def test_the_comparisons_can_fail() -> None:
    # acks all with idempotence unset keeps idempotence on
    assert _changed("CLI-401", 3, {"acks": "all"}) == harness.DISAGREE
    # an explicit enable.idempotence=false with a transactional.id and acks all still throws ...
    assert _changed("CLI-401", 5, {"acks": "all", "enable.idempotence": "false", "transactional.id": "t"}) \
        == harness.AGREE
    # ... but with no transactional.id it is built
    assert _changed("CLI-401", 5, {"acks": "0", "enable.idempotence": "false"}) == harness.DISAGREE
    # retries 1 is no conflict
    assert _changed("CLI-402", 3, {"retries": "1", "enable.idempotence": "true"}) == harness.DISAGREE
    # 5 in flight: the default idempotence stays on at either version
    for vid in ("CLI-403", "CLI-404"):
        assert _changed(vid, 1, {"max.in.flight.requests.per.connection": "5"}) == harness.DISAGREE
    # the transactional.id check is not the one 4.0.0 reaches
    assert _changed("CLI-404", 4, {"max.in.flight.requests.per.connection": "5", "enable.idempotence": "false",
                                   "transactional.id": "t"}) == harness.DISAGREE
    # props the model cannot read: not expressible
    assert _changed("CLI-400", 0, {"acks": "2"}) == harness.NOT_EXPRESSIBLE


def test_the_coverage_table_names_the_vectors() -> None:
    assert_coverage_table_names_vectors(MORE25)
