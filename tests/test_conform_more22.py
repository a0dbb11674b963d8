"""Session 27's vectors (``tests/data/kafka-unit-test-vectors.more22.json``): TransactionMarkerChannelManagerTest's queue
tests (``model/transactions/marker_channel.py``) and TransactionLogTest (``model/coordinator/txn_log_record.py``),
pinned per profile; comparisons that can fail; the rules on their own."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conform_pins import assert_pinned, outcome_totals
from eoscheck.model.api.protocol import FEATURE_SINCE, PROFILES, add_partition_passes_abortable, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors
from eoscheck.model.coordinator.txn_log import load_metadata, to_log_value
from eoscheck.model.coordinator.txn_log_record import key_is_known, read_value, write_value
from eoscheck.model.state import TxnMetadata
from eoscheck.model.transactions import marker_channel as mc
from eoscheck.model.transactions.codes import Errors, TxnState

MORE22 = Path(__file__).parent / "data" / "kafka-unit-test-vectors.more22.json"
_CASES = [f"{r}-{c}" for r in ("success", "disconnected") for c in ("not-coordinator", "loading", "new-epoch")]
#: the vectors whose metadata is at transaction version 2 (the tests build TransactionVersion.TV_2 metadata)
TV2 = ("BRK-TMC-11", "BRK-TMC-12", "BRK-TMC-13", "BRK-TMC-14", "BRK-TMC-15", "BRK-TMC-15-tv2",
       *(f"BRK-TMC-16-{c}" for c in _CASES))
#: the vectors that write or read a version 1 (flexible) value
FLEXIBLE = ("BRK-TL-01", "BRK-TL-02", "BRK-TL-04", "BRK-TL-05", "BRK-TL-08")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """The pin from the profile: TV2 metadata and flexible values need their versions; before KAFKA-16352 (3.8.0) the
    old markers' answer drops the reloaded completion; before KAFKA-14869 (3.4.1) an unknown key throws."""
    p = protocol(name)
    inexpressible: dict[str, str] = {}
    if "transaction-version-2" in p.lacks:
        inexpressible.update(dict.fromkeys(TV2, "transaction-version-2"))
    if "kafka-16192" in p.lacks:
        inexpressible.update(dict.fromkeys(FLEXIBLE, "kafka-16192"))
    disagree: dict[str, str] = {}
    if "kafka-16352" in p.lacks:
        disagree["BRK-TMC-19"] = "before KAFKA-16352 the old markers' answer drops the reloaded completion"
    if "kafka-14869" in p.lacks:
        disagree["BRK-TL-06"] = "before KAFKA-14869 a key of an unknown version is an IllegalStateException"
    if "transaction-version-2" in p.lacks:
        inexpressible["BRK-APM-10"] = "transaction-version-2"
    elif not add_partition_passes_abortable(p):
        disagree["BRK-APM-10"] = "the 2024-10 snapshot's addPartition converts TRANSACTION_ABORTABLE (before KAFKA-14563)"
    return disagree, inexpressible


def test_the_pins_name_the_versions_read() -> None:
    assert FEATURE_SINCE["kafka-16352"].first == (3, 8, 0) and FEATURE_SINCE["kafka-16192"].first == (3, 9, 0)
    assert set(_derived("kafka-2024-10")[0]) == {"BRK-APM-10"} and not _derived("kafka-2024-10")[1]
    assert _derived("kafka-4.0.0") == ({}, {})
    assert set(_derived("kafka-3.7")[0]) == {"BRK-TMC-19"}
    assert set(_derived("kafka-3.3-3.5")[0]) == {"BRK-TMC-19", "BRK-TL-06"}
    assert len(_derived("kafka-3.8-3.9")[1]) == len(TV2) + len(FLEXIBLE) + 1


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more22_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE22), name, disagree, inexpressible)


def test_each_vector_is_judged_under_its_tags_profile_by_default() -> None:
    run = harness.run_file(load_vectors(MORE22))
    assert outcome_totals(run) == {"agree": 26, "disagree": 0, "not expressible": 0}
    assert {v.id: v.variant for v in run.vectors if v.variant != "kafka-2024-10"} == {
        "BRK-TMC-15-tv1": "kafka-4.2", "BRK-TMC-15-tv2": "kafka-4.2", "BRK-TMC-17-tv1": "kafka-4.2",
        "BRK-TMC-18-tv1": "kafka-4.2", "BRK-TL-07": "kafka-4.2", "BRK-TMC-19": "kafka-3.8-3.9",
        "BRK-APM-10": "kafka-4.0.0"}


def test_the_coverage_table_names_the_vectors() -> None:
    # BRK-TL-08 follows no test ("(no test asserts it)"): the table's rows are for the tests' vectors
    data = json.loads(MORE22.read_text())
    data["vectors"] = [v for v in data["vectors"] if not v["source"]["test"].startswith("(no test")]
    assert len(data["vectors"]) == 24
    doc = (Path(__file__).parent.parent / "docs" / "conformance.md").read_text()
    for test in {v["source"]["test"] for v in data["vectors"]}:
        ids = [v["id"] for v in data["vectors"] if v["source"]["test"] == test]
        rows = [line for line in doc.splitlines() if line.startswith("| ") and f"`{test}`" in line]
        assert len(rows) == 1 and rows[0].rstrip(" |").endswith(", ".join(ids)), test


def _run_changed(vid: str, change: Callable[[dict], object], variant: str | None = None) -> str:
    data = json.loads(MORE22.read_text())
    data["vectors"] = [copy.deepcopy(v) for v in data["vectors"] if v["id"] == vid]
    change(data["vectors"][0])
    (v,) = harness.run_file(parse_vectors(data), variant).vectors
    return v.outcome


def test_the_comparisons_can_fail() -> None:
    # one request per broker: expecting both entries for broker 1 in one, or a second round of requests, disagrees
    assert _run_changed("BRK-TMC-11", lambda v: v["steps"][2]["expected"]["requests"].update({"2": []})) \
        == harness.DISAGREE
    # sending the markers does not end the pending completions: expecting none after the second round disagrees
    assert _run_changed("BRK-TMC-11", lambda v: v["steps"][3]["expected"].update(num_txns_with_pending_markers=0)) \
        == harness.DISAGREE
    # a leaderless partition leaves the transaction; a broker without a leader gets no queue
    assert _run_changed("BRK-TMC-12", lambda v: v["steps"][0]["expected"]["transactions"]["txnId1"].update(
        partitions=["topic1-0", "topic1-1"])) == harness.DISAGREE
    # the unknown-broker entries stay there while the cache answers noNode
    assert _run_changed("BRK-TMC-13", lambda v: v["steps"][2]["expected"].update(
        queue_for_unknown_broker={"total": 0})) == harness.DISAGREE
    # emigration drops partition 0's entries only
    assert _run_changed("BRK-TMC-14", lambda v: v["steps"][2]["expected"].update(num_txns_with_pending_markers=0)) \
        == harness.DISAGREE
    # the delayed check writes nothing more
    assert _run_changed("BRK-TMC-15", lambda v: v["steps"][3]["expected"]["completion_appends"].append(
        {"transactional_id": "txnId2", "coordinator_epoch": 0})) == harness.DISAGREE
    # the old markers' answer writes no completion; the new ones' at the new coordinator epoch
    assert _run_changed("BRK-TMC-16-success-new-epoch", lambda v: v["steps"][5]["expected"].update(
        completion_appends=[{"transactional_id": "txnId2", "coordinator_epoch": 0}])) == harness.DISAGREE
    # the value version follows transaction.version; the state and partitions come back
    assert _run_changed("BRK-TL-03", lambda v: v["steps"][0]["input"].update(transaction_version=1)) \
        == harness.DISAGREE
    assert _run_changed("BRK-TL-02", lambda v: v["steps"][5]["expected"]["metadata"].update(state="Ongoing")) \
        == harness.DISAGREE
    assert _run_changed("BRK-TL-08", lambda v: v["steps"][3]["expected"]["metadata"].update(
        client_transaction_version=2)) == harness.DISAGREE
    assert _run_changed("BRK-TL-07", lambda v: v["steps"][0]["expected"].update(metadata={"exists": True})) \
        == harness.DISAGREE
    # a Produce v11 request (genericError) gets TRANSACTION_ABORTABLE too, a v10 one (defaultError) INVALID_TXN_STATE
    def default_error(v: dict) -> None:
        v["steps"][0]["input"]["transaction_supported_operation"] = "defaultError"
    assert _run_changed("BRK-APM-10", default_error) == harness.DISAGREE


def _meta(state: int, parts: tuple[int, ...] = (), tv: int = 0) -> TxnMetadata:
    return TxnMetadata(True, 7, -1, 3, -1, state, False, -1, parts, tv=tv)


def test_the_record_rules_on_their_own() -> None:
    with pytest.raises(ValueError):
        write_value(_meta(TxnState.EMPTY, (1,)), 2)
    assert write_value(_meta(TxnState.EMPTY), 0).version == 0
    flexible = write_value(_meta(TxnState.PREPARE_COMMIT, (1,), tv=2), 2)
    assert flexible.version == 1 and flexible.value.tv == 2
    # a version 0 record has no tagged field: the client's version is not in it
    assert write_value(_meta(TxnState.PREPARE_COMMIT, (1,), tv=2), 0).value.tv == 0
    assert read_value(None, flexible.value) is None
    with pytest.raises(ValueError):
        read_value(2, flexible.value)
    assert key_is_known(0) and not key_is_known(32767)
    with pytest.raises(ValueError):
        key_is_known(32767, unknown_allowed=False)
    # the machines' load keeps the client's transaction version (KIP-890: ClientTransactionVersion, tagged field 2)
    assert load_metadata(to_log_value(_meta(TxnState.PREPARE_COMMIT, (1,), tv=2))).tv == 2


class _Env(mc.Env):
    def __init__(self, meta: TxnMetadata, leaders: dict[int, int | None]) -> None:
        self.meta: TxnMetadata | None = meta
        self.leaders, self.error, self.epoch, self.answers = leaders, 0, 0, [int(Errors.NONE)]

    def leader(self, partition: int) -> int | None:
        return self.leaders[partition]

    def lookup(self, tid: str) -> tuple[int, int]:
        return self.error, self.epoch

    def metadata(self, tid: str) -> TxnMetadata | None:
        return self.meta

    def set_metadata(self, tid: str, meta: TxnMetadata) -> None:
        self.meta = meta

    def append_completion(self, pending: mc.Pending, meta: TxnMetadata) -> int:
        return self.answers.pop(0)


def test_the_channel_rules_on_their_own() -> None:
    env = _Env(_meta(TxnState.PREPARE_COMMIT, (1, 2)), {1: 10, 2: mc.NO_NODE})
    ch = mc.Channel()
    mc.add_txn_markers_to_send(ch, env, "t", 0, 0, env.meta)  # type: ignore[arg-type]
    assert ch.num_markers(10) == 1 and ch.num_markers(None) == 1 and ch.num_markers(11) is None
    (req,) = mc.generate_requests(ch, env)
    assert req.broker == 10 and ch.num_markers(None) == 1
    mc.on_response(ch, env, req, {7: {1: int(Errors.NONE)}})
    assert env.meta is not None and env.meta.partitions == (2,) and not ch.appends
    env.leaders[2] = None  # the leader is gone: the partition leaves the transaction and the completion is written
    mc.generate_requests(ch, env)
    assert env.meta.partitions == () and ch.appends == [("t", 0)] and not ch.pending
    # COORDINATOR_NOT_AVAILABLE: the append is retried by the next generateRequests
    env2 = _Env(_meta(TxnState.PREPARE_COMMIT, (1,)), {1: 10})
    env2.answers = [int(Errors.COORDINATOR_NOT_AVAILABLE), int(Errors.NONE)]
    ch2 = mc.Channel()
    mc.add_txn_markers_to_send(ch2, env2, "t", 0, 0, env2.meta)  # type: ignore[arg-type]
    (req,) = mc.generate_requests(ch2, env2)
    mc.on_response(ch2, env2, req, {7: {1: int(Errors.NONE)}})
    assert len(ch2.retry_appends) == 1
    mc.generate_requests(ch2, env2)
    assert ch2.appends == [("t", 0), ("t", 0)] and not ch2.retry_appends


@pytest.mark.parametrize("by_identity", [True, False])
def test_kafka_16352_on_its_own(by_identity: bool) -> None:
    env = _Env(_meta(TxnState.PREPARE_COMMIT, (1,)), {1: 10})
    ch = mc.Channel(by_identity=by_identity)
    mc.add_txn_markers_to_send(ch, env, "t", 0, 0, env.meta)  # type: ignore[arg-type]
    (old,) = mc.generate_requests(ch, env)
    env.epoch = 1
    mc.add_txn_markers_to_send(ch, env, "t", 0, 1, env.meta)  # type: ignore[arg-type]
    mc.on_response(ch, env, old, {7: {1: int(Errors.NONE)}})
    assert ("t" in ch.pending) is by_identity
