"""Session 24's vectors (``tests/data/kafka-unit-test-vectors.more11.json``): KIP-939 (two-phase commit) as it shipped in
4.1.0 and 4.2.0-rc1 (InitProducerId v6's Enable2Pc and KeepPreparedTxn, the broker's
transaction.two.phase.commit.enable, the TWO_PHASE_COMMIT ACL, the 2PC timeout check), pinned per profile: they agree
under every profile of 4.1.0 and later and are not expressible under an earlier one (the fields do not exist there);
the rules the tests do not reach (UNSUPPORTED_VERSION for keepPreparedTxn, TRANSACTIONAL_ID_AUTHORIZATION_FAILED for
enable2Pc with the config off, a 2PC timeout left unchecked) pinned on the interface directly."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conform_pins import (
    FROM_4_1_0,
    assert_coverage_table_names_vectors,
    assert_pinned,
    outcome_totals,
    profiles_with,
    vectors_by_id,
)
from eoscheck.model.api import coordinator as api
from eoscheck.model.api.protocol import FEATURE_SINCE, PROFILES, protocol, two_phase_commit
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors
from eoscheck.model.coordinator.txn_log import NO_METADATA
from eoscheck.model.errors import Errors

DATA = Path(__file__).parent / "data"
MORE11 = DATA / "kafka-unit-test-vectors.more11.json"
VECTORS = tuple(f"INIT-{n}" for n in range(80, 90))


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    # every vector needs a KIP-939 field; a version without them does not apply
    if two_phase_commit(protocol(name)):
        return {}, {}
    return {}, dict.fromkeys(VECTORS, "kip-939")


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more11_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE11), name, disagree, inexpressible)


def test_kip_939_is_in_the_4_1_0_and_later_profiles() -> None:
    assert profiles_with(two_phase_commit) == FROM_4_1_0
    assert FEATURE_SINCE["kip-939"].first == (4, 1, 0)


def _run_changed(vid: str, change: Callable[[dict], object], variant: str | None = None) -> str:
    data = json.loads(MORE11.read_text())
    data["vectors"] = [copy.deepcopy(v) for v in data["vectors"] if v["id"] == vid]
    change(data["vectors"][0])
    (v,) = harness.run_file(parse_vectors(data), variant).vectors
    return v.outcome


def _step(v: dict, **changes: object) -> None:
    v["steps"][0]["input"].update(changes)


def _initial(v: dict, **changes: object) -> None:
    v["initial_state"].update(changes)


@pytest.mark.parametrize("tag_offset", [0, 5])
def test_the_comparisons_can_fail(tag_offset: int) -> None:
    keep, enable, acl_denied, acl_allowed, timeout = (f"INIT-{80 + tag_offset + i}" for i in range(5))
    # a non-empty id reaches the KIP-939 checks: keepPreparedTxn is UNSUPPORTED_VERSION, enable2Pc with the broker's
    # config off TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert _run_changed(keep, lambda v: _step(v, transactional_id="known")) == harness.DISAGREE
    assert _run_changed(enable, lambda v: _step(v, transactional_id="known")) == harness.DISAGREE
    # the TWO_PHASE_COMMIT ACL is what refuses: allowed, the coordinator (2PC on) answers NONE; without enable2Pc it is
    # not asked; a denied WRITE refuses whatever the 2PC ACL says
    assert _run_changed(acl_denied, lambda v: _step(v, authorizer={"WRITE": "ALLOWED", "TWO_PHASE_COMMIT": "ALLOWED"})) \
        == harness.DISAGREE
    assert _run_changed(acl_denied, lambda v: _step(v, enable_2pc=False)) == harness.DISAGREE
    assert _run_changed(acl_denied, lambda v: _step(v, authorizer={"WRITE": "DENIED", "TWO_PHASE_COMMIT": "ALLOWED"})) \
        == harness.AGREE
    # the coordinator answers the mock's NONE only with the broker's 2PC config on
    assert _run_changed(acl_allowed, lambda v: _initial(v, **{"transaction.two.phase.commit.enable": False})) \
        == harness.DISAGREE
    # 2PC skips the timeout check; a v5 request carries no Enable2Pc, so its timeout is checked (and refused), and an
    # in-range timeout at v5 is an ordinary InitProducerId with the same answer
    assert _run_changed(acl_allowed, lambda v: _step(v, txn_timeout_ms=2**31 - 1)) == harness.AGREE
    assert _run_changed(acl_allowed, lambda v: _step(v, txn_timeout_ms=2**31 - 1, request_version=5,
                                                     authorizer={"WRITE": "ALLOWED"})) == harness.DISAGREE
    # validateTransactionTimeoutMs(enableTwoPC = false, -1) is invalid
    assert _run_changed(timeout, lambda v: v["steps"][5]["input"].update(enable_2pc=False)) == harness.DISAGREE


def test_a_default_run_judges_each_vector_under_its_tags_profile() -> None:
    run = harness.run_file(load_vectors(MORE11))
    assert run.variant == "kafka-4.1.0"
    assert run.chosen_by == "commit 13f70256db3c; by source.tag: kafka-4.2 5"
    tags = {v["id"]: v["source"]["tag"] for v in vectors_by_id(MORE11).values()}
    assert {v.id: v.variant for v in run.vectors} == {
        vid: "kafka-4.1.0" if tag == "4.1.0" else "kafka-4.2" for vid, tag in tags.items()}
    assert outcome_totals(run) == {harness.AGREE: 10, harness.DISAGREE: 0, harness.NOT_EXPRESSIBLE: 0}


_KNOWN = api.CoordinatorState(NO_METADATA, next_producer_id=15)


def _init(name: str, *, config: bool = False, version: int = 6, tid: str | None = "t", timeout: int = 60000,
          enable: bool = False, keep: bool = False, denied: frozenset[str] = frozenset()) -> api.Response:
    req = api.InitProducerIdRequest(tid, txn_timeout_ms=timeout, version=version, enable_2pc=enable,
                                    keep_prepared_txn=keep)
    return api.handle_init_producer_id(_KNOWN, req, protocol(name), two_phase_commit_enable=config, denied=denied)[0]


@pytest.mark.parametrize("name", sorted(FROM_4_1_0))
def test_the_coordinators_kip_939_rules_from_4_1_0(name: str) -> None:
    """TransactionCoordinator.handleInitProducerId l.133-146 at 4.1.0 (l.134-147 at 4.2.0-rc1), which no unit test at
    either tag reaches with a non-empty transactional id."""
    tidaf, unsupported = int(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED), int(Errors.UNSUPPORTED_VERSION)
    assert _init(name, enable=True).error == tidaf
    assert _init(name, keep=True).error == unsupported
    assert _init(name, keep=True, config=True).error == unsupported
    # the config check comes first
    assert _init(name, enable=True, keep=True).error == tidaf
    assert _init(name, enable=True, keep=True, config=True).error == unsupported
    # with 2PC any timeout is taken; without, the check stays
    assert _init(name, enable=True, config=True, timeout=-1) == api.Response(int(Errors.NONE), 15, 0)
    assert _init(name, timeout=-1).error == int(Errors.INVALID_TRANSACTION_TIMEOUT)
    # an idempotent producer gets its id whatever the flags say; a v5 request has no flags
    assert _init(name, tid=None, enable=True, keep=True) == api.Response(int(Errors.NONE), 15, 0)
    assert _init(name, version=5, enable=True, keep=True) == api.Response(int(Errors.NONE), 15, 0)
    # KafkaApis: TWO_PHASE_COMMIT is asked only with enable2Pc, WRITE always
    assert _init(name, config=True, enable=True, denied=frozenset({"TWO_PHASE_COMMIT"})).error == tidaf
    assert _init(name, denied=frozenset({"TWO_PHASE_COMMIT"})).error == int(Errors.NONE)
    assert _init(name, denied=frozenset({"WRITE"})).error == tidaf
    assert api.valid_txn_timeout(-1, protocol(name), enable_2pc=True)


@pytest.mark.parametrize("name", sorted(set(PROFILES) - FROM_4_1_0))
def test_a_version_before_4_1_0_reads_no_kip_939_field(name: str) -> None:
    """4.0.1's InitProducerIdRequest.json stops at v5 and its TransactionCoordinator.handleInitProducerId takes no
    2PC flags: the interface answers as that version, whatever a caller passes."""
    p = protocol(name)
    assert not two_phase_commit(p)
    plain = _init(name, timeout=60000)
    assert _init(name, enable=True, keep=True) == plain
    assert _init(name, enable=True, denied=frozenset({"TWO_PHASE_COMMIT"})) == plain
    assert not api.valid_txn_timeout(-1, p, enable_2pc=True)


def _timeout_vector(timeout: int, *steps: dict) -> dict:
    meta = {"exists": True, "producer_id": 2, "producer_epoch": 3, "txn_timeout_ms": timeout, "state": "Ongoing",
            "partitions": ["topic-0"]}
    return {"id": "X", "mechanism": "init_producer_id", "component": "timedOutTransactions", "source": {},
            "initial_state": {"txn_metadata": meta, "transaction.two.phase.commit.enable": True},
            "steps": [*steps, {"input": {"event": "timer tick"}, "expected": {"aborted": False}}]}


@pytest.mark.parametrize("name", ["kafka-4.1.0", "kafka-4.2", "kafka-4.0.1"])
def test_the_timeout_abort_skips_a_2pc_transaction_from_4_1_0(name: str) -> None:
    """TransactionStateManager.timedOutTransactions l.139 at 4.1.0 (l.141 at 4.2.0-rc1): an Ongoing transaction whose
    timeout is Int.MaxValue (what an Enable2Pc InitProducerId stores, l.146) is not listed; 4.0.1 has no such test
    (its metadata cannot hold a 2PC transaction, and 4.0.1 lacks the config, so the vector does not apply there)."""
    from conform_pins import run_vector
    report = run_vector(_timeout_vector(api.TWO_PC_TIMEOUT_MS), name)
    assert report.outcome == (harness.AGREE if name != "kafka-4.0.1" else harness.NOT_EXPRESSIBLE), report
    # an ordinary timeout is aborted: the same expectation disagrees
    assert run_vector(_timeout_vector(60000), name).outcome == (
        harness.DISAGREE if name != "kafka-4.0.1" else harness.NOT_EXPRESSIBLE)
    # an ordinary InitProducerId ends the 2PC timeout: the fence aborts the Ongoing transaction itself, and the retry
    # after its markers stores the request's timeout (only the timeout abort reads it)
    api_p = protocol(name)
    assert api.may_time_out(api.TWO_PC_TIMEOUT_MS, api_p) == (name == "kafka-4.0.1")
    assert api.resolved_txn_timeout(api.InitProducerIdRequest("t", txn_timeout_ms=5, version=6, enable_2pc=True),
                                    api_p) == (5 if name == "kafka-4.0.1" else api.TWO_PC_TIMEOUT_MS)


def test_an_enable_2pc_init_makes_the_next_transaction_2pc() -> None:
    """The stored timeout comes from the InitProducerId that succeeded: with Enable2Pc the transaction it then opens is
    never timed out, without it the next one is."""
    from conform_pins import run_vector
    def vector(enable: bool) -> dict:
        v = _timeout_vector(60000, {"input": {"api": "InitProducerId", "transactional_id": "known", "enable_2pc": enable,
                                              "txn_timeout_ms": 60000, "request_version": 6},
                                    "expected": {"error": "NONE"}})
        v["initial_state"]["txn_metadata"].update(state="CompleteCommit", partitions=[])
        v["steps"].insert(1, {"input": {"api": "AddPartitionsToTxn", "transactional_id": "known", "producer_id": 2,
                                        "producer_epoch": 4, "partitions": ["topic-0"]},
                              "expected": {"per_partition": {"topic-0": {"error": "NONE"}}}})
        return v
    assert run_vector(vector(True), "kafka-4.1.0").outcome == harness.AGREE
    assert run_vector(vector(False), "kafka-4.1.0").outcome == harness.DISAGREE


def test_no_earlier_vector_needs_kip_939() -> None:
    """The feature is new: no vector of the earlier files names a KIP-939 field, so none moved when the pre-4.1.0
    profiles came to lack it."""
    for path in sorted(DATA.glob("kafka-unit-test-vectors.*.json")):
        if path == MORE11:
            continue
        for v in load_vectors(path).vectors:
            assert "kip-939" not in {f for f, _ in harness.needed_features(v, v.initial_state)}, (path.name, v.id)


def test_the_file_reads_each_test_at_both_tags() -> None:
    data = json.loads(MORE11.read_text())
    assert data["counts"]["total"] == len(data["vectors"]) == 10
    assert [v["id"] for v in data["vectors"]] == list(VECTORS)
    by_test: dict[str, list[str]] = {}
    for v in data["vectors"]:
        by_test.setdefault(v["source"]["test"], []).append(v["source"]["tag"])
    assert all(tags == ["4.1.0", "4.2.0-rc1"] for tags in by_test.values()) and len(by_test) == 5
    for path in sorted(DATA.glob("kafka-unit-test-vectors.*.json")):
        if path != MORE11:
            earlier = json.loads(path.read_text())
            assert not set(VECTORS) & {v["id"] for v in earlier["vectors"]}, path.name


def test_the_coverage_table_names_the_vectors() -> None:
    assert_coverage_table_names_vectors(MORE11)
