"""Session 25's vectors (``tests/data/kafka-unit-test-vectors.more13.json``, conf25b): the transaction coordinator's
DescribeTransactions and ListTransactions (KIP-664, 3.0.0; KIP-994's duration filter, 3.8.0; KIP-1152's
transactional-id pattern, 4.1.0) and the producer's ApiVersions (the coordinator's InitProducerId version, KIP-360;
the finalized transaction.version, read at beginTransaction by the 2024-10 snapshot and when completing from 4.0.0,
KAFKA-18227), pinned per profile; comparisons that fail when the rule is changed; the rules no test reaches, on the
interface directly."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conform_pins import (
    FROM_4_0_0,
    assert_pinned,
    outcome_totals,
    profiles_with,
    run_vector,
    vectors_by_id,
)
from eoscheck.model.api import client as client_api
from eoscheck.model.api import txn_listing as api
from eoscheck.model.api.coordinator import CoordinatorState
from eoscheck.model.api.protocol import FEATURE_SINCE, PROFILES, SNAPSHOT_2024_10, SWITCH_HISTORY, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors
from eoscheck.model.coordinator.txn_log import NO_METADATA
from eoscheck.model.errors import Errors
from eoscheck.model.producer.feature_versions import FEATURE_CHECK_SINCE
from eoscheck.model.state import TxnMetadata
from eoscheck.model.transactions.codes import NO_PENDING, TxnState

DATA = Path(__file__).parent / "data"
MORE13 = DATA / "kafka-unit-test-vectors.more13.json"
DESCRIBE = ("SM-140", "SM-141", "SM-142", "SM-143", "SM-144")
CLIENT = ("CLI-180", "CLI-181", "CLI-182", "CLI-183", "CLI-184")
#: the 2024-10 snapshot's maybeUpdateTransactionV2Enabled() takes no onInitialization
NO_ARGUMENT = "the 2024-10 snapshot's maybeUpdateTransactionV2Enabled takes no argument"


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    lacks, check = p.lacks, p.client_feature_check
    disagree: dict[str, str] = {}
    inexpressible: dict[str, str] = {}

    def first_lacking(vid: str, *features: str) -> None:
        for f in features:
            if f in lacks:
                inexpressible[vid] = f
                return

    for vid in DESCRIBE:
        first_lacking(vid, "kip-664")
    first_lacking("SM-145", "kip-664", "kip-994", "kip-1152")
    first_lacking("SM-146", "kip-664", "kip-1152")
    first_lacking("SM-147", "kip-664", "kip-994")
    if "kip-360" in lacks:
        return disagree, {**inexpressible, **dict.fromkeys(CLIENT, "kip-360")}
    if check == "4.0":
        inexpressible["CLI-182"] = "canBumpEpoch is needToTriggerEpochBumpFromClient from 4.0.0 (KAFKA-17898)"
    for vid in ("CLI-180", "CLI-181", "CLI-183", "CLI-184"):
        first_lacking(vid, "transaction-version-2")
    if "transaction-version-2" not in lacks:
        if check == "4.0":
            disagree["CLI-180"] = "KAFKA-18227: the commit reads the features, so TV2 is on before the next transaction"
        else:
            inexpressible.update(dict.fromkeys(("CLI-181", "CLI-183", "CLI-184"), NO_ARGUMENT))
    return disagree, inexpressible


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more13_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE13), name, disagree, inexpressible)


def test_the_listed_pins_of_three_profiles() -> None:
    """The derivation spelled out where the file's vectors are judged by default."""
    assert _derived("kafka-4.2") == ({"CLI-180": _derived("kafka-4.2")[0]["CLI-180"]},
                                     {"CLI-182": _derived("kafka-4.2")[1]["CLI-182"]})
    assert _derived("kafka-2024-10")[0] == {}
    assert set(_derived("kafka-2024-10")[1]) == {"SM-145", "SM-146", "CLI-181", "CLI-183", "CLI-184"}
    assert _derived("kafka-3.8-3.9")[1] == {"SM-145": "kip-1152", "SM-146": "kip-1152", "CLI-180": "transaction-version-2",
                                            "CLI-181": "transaction-version-2", "CLI-183": "transaction-version-2",
                                            "CLI-184": "transaction-version-2"}


def test_a_default_run_judges_each_vector_under_its_tags_profile() -> None:
    run = harness.run_file(load_vectors(MORE13))
    assert run.variant == "kafka-2024-10"
    assert run.chosen_by == "commit 1eb7644349cb; by source.tag: kafka-4.2 7, kafka-3.8-3.9 1, kafka-4.1.0 3"
    assert outcome_totals(run) == {harness.AGREE: 13, harness.DISAGREE: 0, harness.NOT_EXPRESSIBLE: 0}


def test_the_new_features_and_the_client_switch_follow_their_releases() -> None:
    assert FEATURE_SINCE["kip-664"].first == (3, 0, 0)
    assert FEATURE_SINCE["kip-994"].first == (3, 8, 0)
    assert FEATURE_SINCE["kip-1152"].first == (4, 1, 0)
    assert SWITCH_HISTORY["client_feature_check"] == (((2, 0, 0), "none"), (SNAPSHOT_2024_10, "2024-10"),
                                                      ((4, 0, 0), "4.0"))
    assert set(FEATURE_CHECK_SINCE) == {"none", "2024-10", "4.0"}
    assert profiles_with(lambda p: p.client_feature_check == "4.0") == FROM_4_0_0
    assert profiles_with(lambda p: p.client_feature_check == "2024-10") == {"kafka-2024-10"}


def _run_changed(vid: str, change: Callable[[dict], object], variant: str | None = None) -> str:
    v = copy.deepcopy(vectors_by_id(MORE13)[vid])
    change(v)
    tag = v["source"].get("tag")
    from eoscheck.model.api.protocol import profile_for_tag
    return run_vector(v, variant or (profile_for_tag(tag) if tag else "kafka-2024-10")).outcome


def test_the_describe_comparisons_can_fail() -> None:
    def state(v: dict, s: str) -> None:
        v["initial_state"]["txn_metadata"]["state"] = s

    # a Dead metadata is not described; an Ongoing one is
    assert _run_changed("SM-143", lambda v: state(v, "Dead")) == harness.DISAGREE
    assert _run_changed("SM-141", lambda v: state(v, "Ongoing")) == harness.DISAGREE
    # the lookup's error is passed on; an id the cache does not hold is TRANSACTIONAL_ID_NOT_FOUND
    assert _run_changed("SM-143", lambda v: v["initial_state"].update(coordinator={"loading": True})) == harness.DISAGREE
    assert _run_changed("SM-142", lambda v: v["initial_state"].pop("coordinator")) == harness.DISAGREE
    # the empty id is refused before the lookup, even while loading
    assert _run_changed("SM-140", lambda v: v["initial_state"].update(coordinator={"loading": True})) == harness.AGREE
    assert _run_changed("SM-143", lambda v: v["initial_state"]["txn_metadata"].update(producer_id=11)) == harness.DISAGREE


def _step(vid: str, i: int) -> Callable[[Callable[[dict], object]], Callable[[dict], object]]:
    def wrap(change: Callable[[dict], object]) -> Callable[[dict], object]:
        def apply(v: dict) -> None:
            v["steps"] = [v["steps"][i]]
            change(v["steps"][0])
        return apply
    return wrap


def test_the_list_comparisons_can_fail() -> None:
    # the Dead transaction t8 would be listed if Dead were not filtered
    def t8_ongoing(v: dict) -> None:
        for obj in v["initial_state"].values():
            if obj.get("transactional_id") == "t8":
                obj["state"] = "Ongoing"
    assert _run_changed("SM-147", t8_ongoing) == harness.DISAGREE
    # duration: a transaction that started exactly `duration` ago is not listed (<=), one older is
    assert _run_changed("SM-147", _step("SM-147", 2)(lambda s: s["input"].update(duration_ms=999))) == harness.DISAGREE
    assert _run_changed("SM-147", _step("SM-147", 2)(lambda s: s["input"].update(duration_ms=1001))) == harness.AGREE
    # an unknown state name is listed back and matches nothing
    assert _run_changed("SM-147", _step("SM-147", 8)(lambda s: s["expected"].update(unknown_state_filters=[]))) \
        == harness.DISAGREE
    # the pattern must match the whole id (Pattern.matches), not a part of it
    whole = _step("SM-145", 16)(lambda s: s["input"].update(transactional_id_pattern="special-"))
    assert _run_changed("SM-145", lambda v: (whole(v), v["steps"][0]["expected"].update(transactional_ids=[]))) \
        == harness.AGREE
    assert _run_changed("SM-145", whole) == harness.DISAGREE
    # while loading, the whole list is refused; an invalid pattern throws only after that check
    assert _run_changed("SM-146", lambda v: v["initial_state"].update(coordinator={"loading": True})) == harness.DISAGREE
    assert _run_changed("SM-146", lambda v: v["steps"][0]["input"].update(transactional_id_pattern="(ab)")) \
        == harness.DISAGREE


def test_the_client_comparisons_can_fail() -> None:
    # without the update to transaction.version 2 the commit stays TV1, with no epoch bump
    assert _run_changed("CLI-181", lambda v: v["steps"].pop(4)) == harness.DISAGREE
    # the upgrade read at initialization (the update before initTransactions' read): TV2 from the start, no bump at
    # the commit
    def upgrade_at_init(v: dict) -> None:
        v["steps"].insert(2, v["steps"].pop(4))
    assert _run_changed("CLI-181", upgrade_at_init) == harness.DISAGREE
    # a coordinator whose InitProducerId stops at v2 cannot bump the epoch; removing its versions changes nothing
    def old_coordinator(v: dict) -> None:
        v["steps"][0]["input"]["init_producer_id_max_version"] = 2
    assert _run_changed("CLI-182", old_coordinator) == harness.DISAGREE
    assert _run_changed("CLI-183", old_coordinator) == harness.DISAGREE
    # features of an epoch not above the largest seen are not taken
    def newer(v: dict) -> None:
        v["steps"][1]["input"].update(finalized_features={"transaction.version": 2}, finalized_features_epoch=1)
    assert _run_changed("CLI-184", newer) == harness.DISAGREE
    v = copy.deepcopy(vectors_by_id(MORE13)["CLI-184"])
    v["steps"][1]["input"]["finalized_features"] = {"transaction.version": 2}
    assert run_vector(v, "kafka-4.1.0").outcome == harness.AGREE


def _meta(pid: int, state: int) -> TxnMetadata:
    return TxnMetadata(True, pid, -1, 0, -1, int(state), False, NO_PENDING, (), -1, 0)


@pytest.mark.parametrize("name", ["kafka-4.2", "kafka-3.7", "kafka-3.0-3.1.0"])
def test_the_coordinator_rules_no_test_reaches(name: str) -> None:
    """handleDescribeTransactions / handleListTransactions before startup (COORDINATOR_NOT_AVAILABLE), a partition not
    owned here (NOT_COORDINATOR), and a request field the version does not have (read as its default)."""
    p = protocol(name)
    cs = CoordinatorState(_meta(3, TxnState.ONGOING), 0)
    assert api.describe_transaction(cs, "t", active=False).error == Errors.COORDINATOR_NOT_AVAILABLE
    assert api.describe_transaction(cs._replace(lookup_error=int(Errors.NOT_COORDINATOR)), "t").error == \
        Errors.NOT_COORDINATOR
    assert api.describe_transaction(CoordinatorState(NO_METADATA, 0), "t").error == Errors.TRANSACTIONAL_ID_NOT_FOUND
    assert api.list_transactions({}, api.ListFilters(), p, active=False).error == Errors.COORDINATOR_NOT_AVAILABLE
    cache = {"a": _meta(1, TxnState.ONGOING), "b": _meta(2, TxnState.EMPTY)}
    young = api.list_transactions(cache, api.ListFilters(duration_ms=1000), p, start_ms={"a": 0, "b": 0}, now_ms=10)
    assert [t.transactional_id for t in young.transactions] == ([] if "kip-994" not in p.lacks else ["a", "b"])
    matched = api.list_transactions(cache, api.ListFilters(transactional_id_pattern="a"), p)
    assert [t.transactional_id for t in matched.transactions] == (["a"] if "kip-1152" not in p.lacks else ["a", "b"])
    bad = api.list_transactions(cache, api.ListFilters(transactional_id_pattern="(ab(cd"), p)
    assert bad.error == (Errors.INVALID_REGULAR_EXPRESSION if "kip-1152" not in p.lacks else Errors.NONE)


def test_the_client_rules_per_version() -> None:
    cache = client_api.update_api_versions(client_api.ApiVersionsCache(), "0", 6, 2, 2)
    start = client_api.FeatureRead(1, False)
    assert client_api.maybe_update_tv2_enabled(start, cache, on_initialization=False, check="4.0") == \
        (client_api.FeatureRead(2, True), True)
    assert client_api.maybe_update_tv2_enabled(start, cache, on_initialization=False, check="2024-10") == \
        (client_api.FeatureRead(2, True), False)
    assert client_api.maybe_update_tv2_enabled(start, cache, on_initialization=False, check="none") == (start, False)
    assert client_api.maybe_update_tv2_enabled(start, cache, on_initialization=True, check="4.0") == \
        (client_api.FeatureRead(2, True), False)
    # already on: no bump; nothing newer than what was read: nothing read
    assert client_api.maybe_update_tv2_enabled(client_api.FeatureRead(1, True), cache, on_initialization=False,
                                               check="4.0")[1] is False
    assert client_api.maybe_update_tv2_enabled(client_api.FeatureRead(2, False), cache, on_initialization=False,
                                               check="4.0") == (client_api.FeatureRead(2, False), False)
    # an older epoch leaves the features; remove drops the node's versions only
    older = client_api.update_api_versions(cache, "1", 2, 1, 1)
    assert older.features_epoch == 2 and older.transaction_version == 2
    assert not client_api.coordinator_supports_epoch_bump(older, "1")
    assert not client_api.coordinator_supports_epoch_bump(client_api.remove_api_versions(cache, "0"), "0")
    assert client_api.need_to_trigger_epoch_bump_from_client(True, client_api.FeatureRead(2, False))
    assert not client_api.need_to_trigger_epoch_bump_from_client(True, client_api.FeatureRead(2, True))
    assert client_api.can_bump_epoch(False, False) and not client_api.can_bump_epoch(True, False)


def test_the_coverage_table_names_the_vectors() -> None:
    """One row per test; CLI-183 and CLI-184 re-read tests whose rows end with more8's free-text vectors."""
    doc = (Path(__file__).parent.parent / "docs" / "conformance.md").read_text()
    by_test: dict[tuple[str, str], list[str]] = {}
    for v in json.loads(MORE13.read_text())["vectors"]:
        by_test.setdefault((Path(v["source"]["file"]).stem, v["source"]["test"]), []).append(v["id"])
    for (cls, test), ids in by_test.items():
        # the class too: KafkaApisTest has a testDescribeTransactions of its own (session 28's row)
        rows = [line for line in doc.splitlines() if line.startswith(f"| {cls} | `{test}`")]
        assert len(rows) == 1, test
        if ids in (["CLI-183"], ["CLI-184"]):
            assert ids[0] in rows[0], test
        else:
            assert rows[0].rstrip(" |").endswith(", ".join(ids)), test


def test_no_earlier_vector_reads_the_new_steps() -> None:
    """The steps are new: no vector of the earlier files calls them, so the earlier outcomes could not move (more8's
    CLI-156 and CLI-157 stated their ApiVersions calls in free text, which the new route does not take, until session
    26 wrote them with these steps on purpose)."""
    for path in sorted(DATA.glob("kafka-unit-test-vectors.*.json")):
        if path == MORE13:
            continue
        for v in json.loads(path.read_text())["vectors"]:
            if v["id"] in ("CLI-156", "CLI-157"):
                continue
            for s in v["steps"]:
                kind = str(s["input"].get("call") or s["input"].get("api") or s["input"].get("event") or "")
                assert not harness.re.search(r"handleDescribeTransactions|listTransactionStates|"
                                             r"handleListTransactions|^apiVersions\.(update|remove)$|"
                                             r"maybeUpdateTransactionV2Enabled|handleCoordinatorReady", kind), v["id"]
