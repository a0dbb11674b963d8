"""Session 26's vectors (``tests/data/kafka-unit-test-vectors.more18.json``): a transactional producer's late failure of
a batch it expired already before KAFKA-14884 (3.6.0), when ``Sender.failBatch`` still ran ``handleFailedBatch`` for
it (``model/producer/late_failure.py``), pinned per profile; comparisons that can fail; the rule on its own."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conform_pins import assert_pinned, outcome_totals
from eoscheck.model.api.protocol import FEATURE_SINCE, PROFILES, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors
from eoscheck.model.producer.late_failure import adjust_after_late_failure, handle_late_failed_batch
from eoscheck.model.producer.partition_sequences import InFlightBatch, PartitionEntry

MORE18 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more18.json"
ALL = tuple(f"CLI-{n}" for n in range(290, 298))


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """The pin from what the profile lacks: every vector states a version before KAFKA-14884; an invalid transition
    threw KafkaException before KAFKA-13412 (CLI-294 states 3.0.0, CLI-293 3.5.2); CLI-295 states a client before
    KAFKA-12152 and KAFKA-13794, CLI-296 one with both."""
    p = protocol(name)
    if "kip-360" in p.lacks:
        return {}, dict.fromkeys(ALL, "kip-360")
    if "kafka-14884" not in p.lacks:
        return dict.fromkeys(ALL, "from KAFKA-14884 (3.6.0) the late failure is ignored"), {}
    disagree: dict[str, str] = {}
    if p.client_retry_safe_calls:
        disagree["CLI-294"] = "an invalid transition throws IllegalStateException from KAFKA-13412"
    else:
        disagree["CLI-293"] = "an invalid transition throws KafkaException before KAFKA-13412"
    if "kafka-12152" not in p.lacks or "kafka-13794" not in p.lacks:
        disagree["CLI-295"] = "KAFKA-12152 adjusts the older epoch's sequences (and KAFKA-13794 keeps r2)"
    if "kafka-13794" in p.lacks:
        disagree["CLI-296"] = "before KAFKA-13794 the removal by base sequence takes r2"
    return disagree, {}


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more18_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE18), name, disagree, inexpressible)


def test_the_pins_name_the_profiles_the_brief_named() -> None:
    # the 3.3-3.5 client: only the 3.0.0 and 2.7.0 vectors disagree; 3.0-3.1.0 and 2.5 each differ from it
    assert set(_derived("kafka-3.3-3.5")[0]) == {"CLI-294", "CLI-295"}
    assert set(_derived("kafka-3.0-3.1.0")[0]) == {"CLI-293", "CLI-295", "CLI-296"}
    assert set(_derived("kafka-2.5")[0]) == {"CLI-293", "CLI-296"}
    assert FEATURE_SINCE["kafka-14884"].first == (3, 6, 0)


def test_each_vector_is_judged_under_its_tags_profile_by_default() -> None:
    run = harness.run_file(load_vectors(MORE18))
    assert outcome_totals(run) == {"agree": 8, "disagree": 0, "not expressible": 0}
    assert {v.id: v.variant for v in run.vectors if v.variant != "kafka-3.3-3.5"} == {
        "CLI-294": "kafka-3.0-3.1.0", "CLI-295": "kafka-2.7-2.8"}


def _run_changed(vid: str, change: Callable[[dict], object], variant: str | None = None) -> str:
    data = json.loads(MORE18.read_text())
    data["vectors"] = [copy.deepcopy(v) for v in data["vectors"] if v["id"] == vid]
    change(data["vectors"][0])
    (v,) = harness.run_file(parse_vectors(data), variant).vectors
    return v.outcome


def test_the_comparisons_can_fail() -> None:
    # the second adjustment throws: expecting none disagrees
    assert _run_changed("CLI-290", lambda v: v["steps"][3]["expected"].update(exception=None)) == harness.DISAGREE
    # r2 moves down to 0: expecting it at 1 disagrees
    assert _run_changed("CLI-291", lambda v: v["steps"][4]["expected"]["request"].update(base_sequence=1)) \
        == harness.DISAGREE
    # the lingering epoch bump: expecting READY after the commit disagrees
    assert _run_changed("CLI-293", lambda v: v["steps"][8]["expected"].update(client_state="READY")) \
        == harness.DISAGREE
    # and under 3.6+ READY is what the commit ends in (the late answer was ignored, no bump was asked for)
    def as_at_3_6(v: dict) -> None:
        v["steps"][4]["expected"] = {"ignored": True, "client_state": "INITIALIZING", "epoch_bump_required": False}
        v["steps"][5]["expected"]["epoch_bump_required"] = False
        v["steps"][8]["expected"]["client_state"] = "READY"
    assert _run_changed("CLI-293", as_at_3_6, "kafka-3.6") == harness.AGREE


def test_the_rule_on_its_own() -> None:
    r1 = InFlightBatch("r1", 0, 1, 7, 0)
    r2 = InFlightBatch("r2", 1, 2, 7, 0)
    e = PartitionEntry(7, 0, next_sequence=3, in_flight=(r2,))
    kw = {"producer": (7, 0), "can_bump_epoch": True, "by_identity": True, "stale_ignored": False,
          "invalid_transition": "IllegalStateException"}
    r = handle_late_failed_batch("ABORTABLE_ERROR", e, r1, "X", adjust=True, **kw)
    assert (r.state, r.last_error, r.bump_required, r.exception) == ("ABORTABLE_ERROR", "X", True, None)
    assert r.entry.next_sequence == 2 and [b.base_sequence for b in r.entry.in_flight] == [0]
    assert handle_late_failed_batch("ABORTABLE_ERROR", e, r1, "X", adjust=False, **kw).entry == e
    # completing: no bump asked for; the abort keeps its state and lastError
    r = handle_late_failed_batch("ABORTING_TRANSACTION", e, r1, "X", adjust=True, **kw)
    assert (r.state, r.last_error, r.bump_required, r.entry.next_sequence) == ("ABORTING_TRANSACTION", None, False, 2)
    # READY: the bump is asked for, then the transition throws and nothing else runs
    r = handle_late_failed_batch("READY", e, r1, "X", adjust=True, **kw)
    assert (r.state, r.bump_required, r.exception, r.entry) == ("READY", True, "IllegalStateException", e)
    # the first check: the next sequence would go below 0
    assert adjust_after_late_failure(PartitionEntry(7, 0, next_sequence=0), r1)[1] == "IllegalStateException"
    # the second: the next sequence is lowered, the in-flight batch is not
    low = PartitionEntry(7, 0, next_sequence=2, in_flight=(InFlightBatch("r3", 0, 1, 7, 0),))
    out, thrown = adjust_after_late_failure(low, InFlightBatch("r1", 0, 2, 7, 0))
    assert thrown == "IllegalStateException" and out.next_sequence == 0 and out.in_flight == low.in_flight
