"""Session 25's vectors (``tests/data/kafka-unit-test-vectors.more14.json``): the producer's close (SenderTest's shutdown
tests and TransactionManagerTest testSenderShutdownWithPendingTransactions: KAFKA-6635, KAFKA-16217), ProducerStateManager's
hasLateTransaction (KIP-664, KAFKA-13221) with the harness's clock, and the new group coordinator's OffsetDelete with
pending transactional offsets (KIP-496, KAFKA-14505 [8/8]), pinned per profile; comparisons that can fail; the rules'
older versions, which no profile reaches through a vector, on the rules directly."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conform_pins import assert_coverage_table_names_vectors, assert_pinned, outcome_totals
from eoscheck.model.api.protocol import FEATURE_SINCE, PROFILE_TABLE, PROFILES, protocol
from eoscheck.model.conformance import harness
from eoscheck.model.conformance.vectors import load_vectors, parse_vectors
from eoscheck.model.errors import Errors
from eoscheck.model.group.metadata import NO_COMMIT, CommittedOffset, PendingTxnOffset, new_group
from eoscheck.model.group.offset_delete import delete_offsets
from eoscheck.model.group.offset_expiry import ExpiryResult, cleanup_expired_offsets
from eoscheck.model.partition.late_transactions import LATE_TRANSACTION_BUFFER_MS, has_late_transaction
from eoscheck.model.producer.sender_close import (
    CloseState,
    abort_failure,
    close_after_loops,
    close_transaction_manager,
    next_close_action,
)
from eoscheck.model.producer.txn_calls import PendingCall, TxnClient, await_result
from eoscheck.model.state import ProducerStateEntry

DATA = Path(__file__).parent / "data"
MORE14 = DATA / "kafka-unit-test-vectors.more14.json"
CLOSE = ("CLI-170", "CLI-171", "CLI-172", "CLI-174")
LATE = ("BRK-PSM-40", "BRK-PSM-41", "BRK-PSM-42", "BRK-PSM-43", "BRK-PSM-44", "BRK-PSM-45")
DELETE = ("BRK-OMM-40", "BRK-OMM-41")


def _derived(name: str) -> tuple[dict[str, str], dict[str, str]]:
    p = protocol(name)
    inexpressible: dict[str, str] = {}
    disagree: dict[str, str] = {}
    if "kip-360" in p.lacks:
        # the interface's client is the KIP-360 one (its AddPartitionsToTxn answer)
        inexpressible.update(dict.fromkeys(CLOSE, "kip-360"))
    for feature in ("kafka-6635", "kafka-16217"):  # the harness names the first one lacking
        if feature in p.lacks:
            inexpressible.setdefault("CLI-173", feature)
    if "kafka-13221" in p.lacks:
        inexpressible.update(dict.fromkeys(LATE, "kafka-13221"))
    elif "transaction-version-2" in p.lacks:
        # testHasLateTransaction read at 4.2.0-rc1 with transactionVersion = 2: its markers are TV2's
        inexpressible["BRK-PSM-45"] = "transaction-version-2"
    if "kip-496" in p.lacks:
        inexpressible.update(dict.fromkeys(DELETE, "kip-496"))
    elif not p.offset_delete_pending:
        disagree.update(dict.fromkeys(DELETE, "before KAFKA-14505 [8/8] (3.8.0) no tombstone for a pending-only offset"))
    if "kip-447" in p.lacks:
        # its OffsetFetch asks require_stable, OffsetFetch v7 of KIP-447 (2.5.0)
        inexpressible["OFS-40"] = "kip-447"
    if not p.offset_delete_pending:
        disagree["BRK-OMM-43"] = "before KAFKA-14505 [8/8] (3.8.0) an offset with a pending transactional one expires"
    if not p.expiry_keeps_group_with_open_txns:
        disagree["BRK-OMM-44"] = "before KAFKA-19163 (4.0.1, 4.1.0) a group without committed offsets is deletable"
    return disagree, inexpressible


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_more14_vectors_outcome_is_pinned_per_profile(name: str) -> None:
    disagree, inexpressible = _derived(name)
    assert_pinned(load_vectors(MORE14), name, disagree, inexpressible)


def test_the_default_run_agrees_and_the_counts_per_profile_are_the_documented_ones() -> None:
    vf = load_vectors(MORE14)
    assert outcome_totals(harness.run_file(vf)) == {"agree": 17, "disagree": 0, "not expressible": 0}
    got = {n: tuple(outcome_totals(harness.run_file(vf, n)).values()) for n in PROFILE_TABLE}
    assert {n for n, t in got.items() if t == (17, 0, 0)} == {
        "kafka-later-trunk", "kafka-4.2", "kafka-4.1.1", "kafka-4.1.0", "kafka-4.0.1"}
    assert got["kafka-4.0.0"] == got["kafka-2024-10"] == (16, 1, 0) and got["kafka-3.8-3.9"] == (15, 1, 1)
    assert got["kafka-3.7"] == got["kafka-3.6"] == got["kafka-3.3-3.5"] == (11, 4, 2)
    assert got["kafka-3.1.1-3.2"] == got["kafka-2.5"] == (6, 4, 7)
    assert got["kafka-2.4.0"] == (1, 4, 12) and got["kafka-2.0.0"] == (1, 2, 14)


def test_a_feature_released_inside_a_profiles_range_is_named_with_its_version() -> None:
    (v,) = [r for r in harness.run_file(load_vectors(MORE14), "kafka-3.7").vectors if r.id == "CLI-173"]
    assert "KAFKA-16217" in v.reason and "versions before 3.7.1 lack" in v.reason
    assert FEATURE_SINCE["kafka-16217"].first == (3, 7, 1) and FEATURE_SINCE["kafka-6635"].first == (2, 3, 0)
    assert FEATURE_SINCE["kafka-13221"].first == (3, 2, 0) and FEATURE_SINCE["kip-496"].first == (2, 4, 0)


def _run_changed(vid: str, change: Callable[[dict], object], variant: str | None = None) -> str:
    data = json.loads(MORE14.read_text())
    data["vectors"] = [copy.deepcopy(v) for v in data["vectors"] if v["id"] == vid]
    change(data["vectors"][0])
    (v,) = harness.run_file(parse_vectors(data), variant).vectors
    return v.outcome


def _last_input(v: dict, **changes: object) -> None:
    v["steps"][-1]["input"].update(changes)


def _step(index: int, **changes: object) -> Callable[[dict], None]:
    def change(v: dict) -> None:
        v["steps"][index]["input"].update(changes)
    return change


def test_the_close_comparisons_can_fail() -> None:
    # the queued commit's EndTxn is what the close sends; no prepared answer leaves it unanswered
    assert _run_changed("CLI-170", lambda v: v["steps"][-1]["expected"].update(end_txn_sent=["ABORT"])) \
        == harness.DISAGREE
    assert _run_changed("CLI-170", lambda v: v["steps"][-1]["input"].pop("EndTxnResponse")) == harness.NOT_EXPRESSIBLE
    # an open transaction is aborted, not committed
    assert _run_changed("CLI-171", lambda v: v["steps"][-1]["expected"].update(end_txn_sent=["COMMIT"])) \
        == harness.DISAGREE
    # a graceful close completes the commit: its result does not fail
    def graceful(v: dict) -> None:
        _step(4, call="sender.initiateClose()")(v)
        _step(5, EndTxnResponse="NONE")(v)

    assert _run_changed("CLI-172", graceful) == harness.DISAGREE
    # a beginAbort that does not throw aborts through EndTxn: the manager is not closed
    assert _run_changed("CLI-173", lambda v: _last_input(v, begin_abort_throws=None, EndTxnResponse="NONE")) \
        == harness.DISAGREE


def test_the_late_transaction_and_offset_delete_comparisons_can_fail() -> None:
    # a millisecond less and the transaction is not late yet
    assert _run_changed("BRK-PSM-42", _step(2, ms=600000)) == harness.DISAGREE
    # with the profile's 15-minute transaction.max.timeout.ms it is not late either
    assert _run_changed("BRK-PSM-43", lambda v: v["initial_state"].pop("max_transaction_timeout_ms")) \
        == harness.DISAGREE
    # a subscribed topic is refused and keeps its offset
    assert _run_changed("BRK-OMM-40", _step(0, group_subscribed_to_topic=True)) == harness.DISAGREE
    # a retention a millisecond longer leaves foo-0 unexpired: no tombstone
    assert _run_changed("BRK-OMM-44", _step(1, offsets_retention_ms=60001)) == harness.DISAGREE
    # a group subscribed to foo keeps its offsets
    assert _run_changed("BRK-OMM-44", _step(1, subscribed_topics=["foo"])) == harness.DISAGREE
    # without the pending offset, the expired offset goes and the group with it
    assert _run_changed("BRK-OMM-43", lambda v: v["initial_state"].pop("pending_txn_offsets")) == harness.DISAGREE


def test_several_groups_keep_their_own_offsets() -> None:
    # a marker on both offsets partitions materialises otherGroup's offset before the test's fetch
    assert _run_changed("OFS-40", _step(2, offsets_partitions=[0, 1])) == harness.DISAGREE
    # a marker on neither leaves groupId's offset pending
    assert _run_changed("OFS-40", _step(2, offsets_partitions=[])) == harness.DISAGREE
    # group bar's pending offset for a partition named as foo's does not replace foo's: foo keeps 100
    def bar_writes_bar_0(v: dict) -> None:
        v["steps"][4]["input"].update(partition="bar-0", offset=999)
        v["steps"][5]["expected"] = {"pending_txn": {"5": {"bar-0": 999}}}
        v["steps"][9]["expected"]["pending_txn"]["5"] = {"bar-0": 999}

    assert _run_changed("BRK-OMM-42", bar_writes_bar_0) == harness.DISAGREE
    def foo_keeps_100(v: dict) -> None:
        bar_writes_bar_0(v)
        v["steps"][9]["expected"]["pending_txn"]["5"] = {"bar-0": 100}

    assert _run_changed("BRK-OMM-42", foo_keeps_100) == harness.AGREE
    # a group the initial state does not hold
    assert _run_changed("BRK-OMM-42", _step(0, group_id="baz")) == harness.NOT_EXPRESSIBLE


def _client(state: str, pending: PendingCall | None = None) -> TxnClient:
    return TxnClient(state, "", True, True, pending_call=pending)


def test_the_close_rule_per_version() -> None:
    ongoing = CloseState(False, False, False, True, False)
    queued = CloseState(False, False, True, True, True)
    # KAFKA-6635 (2.3.0): the queued EndTxn is run, then an open transaction aborted; before, the close ends
    assert next_close_action(queued, kafka_6635=True) == "run-once"
    assert next_close_action(ongoing, kafka_6635=True) == "begin-abort"
    assert next_close_action(ongoing, kafka_6635=False) == next_close_action(queued, kafka_6635=False) == "closed"
    assert next_close_action(ongoing._replace(forced=True), kafka_6635=True) == "closed"
    # a failing beginAbort: escapes run() (2.3.0 .. 3.5.x), retried (KAFKA-14831, 3.6.0 .. 3.7.0), forces the close
    assert abort_failure(kafka_14831=False, kafka_16217=False) == "escape"
    assert abort_failure(kafka_14831=True, kafka_16217=False) == "retry"
    assert abort_failure(kafka_14831=True, kafka_16217=True) == "force-close"
    assert close_after_loops(forced=True, kafka_6635=True, escaped=True) == (False, False, False)
    # before KAFKA-6635 a forced close aborts the batches but leaves the transactional result waiting
    assert close_after_loops(forced=True, kafka_6635=False) == (False, True, True)
    assert close_after_loops(forced=False, kafka_6635=True) == (False, False, True)


def test_transaction_manager_close_fails_the_queued_request_and_the_kept_result() -> None:
    c = close_transaction_manager(_client("COMMITTING_TRANSACTION", PendingCall("COMMITTING_TRANSACTION",
                                                                                 "commitTransaction")), "3.6",
                                  requests_queued=True)
    assert c.state == "FATAL_ERROR" and await_result(c).exception == "KafkaException"
    # nothing queued: the state stays, the result still fails
    c = close_transaction_manager(_client("IN_TRANSACTION", PendingCall("READY", "initTransactions")), "3.6",
                                  requests_queued=False)
    assert c.state == "IN_TRANSACTION" and await_result(c).exception == "KafkaException"


def _entry(pid: int, last_ts: int, first_offset: int) -> ProducerStateEntry:
    return ProducerStateEntry(pid, 0, (), last_ts, current_txn_first_offset=first_offset)


def test_has_late_transaction_reads_the_oldest_transactions_producer() -> None:
    limit = 300000 + LATE_TRANSACTION_BUFFER_MS
    older, newer = _entry(1, 1000, 5), _entry(2, 9000, 3)
    # the lowest first offset decides, not the oldest timestamp
    assert not has_late_transaction((older, newer), 9000 + limit, 300000)
    assert has_late_transaction((older, newer), 9000 + limit + 1, 300000)
    # no timestamp (0) is never late; a producer without a transaction is not read
    assert not has_late_transaction((_entry(1, 0, 5),), 10**12, 300000)
    assert not has_late_transaction((_entry(1, 1000, -1),), 10**12, 300000)


def test_offset_delete_per_coordinator_and_version() -> None:
    g = new_group(2)._replace(pending=(PendingTxnOffset(10, 0, 100, 0),))
    g = g._replace(offsets=(NO_COMMIT, CommittedOffset(5, 1)))
    # 3.8.0+: both partitions get a tombstone, the pending offset goes
    r = delete_offsets(g, (0, 1), subscribed=False, new_coordinator=True, pending_aware=True)
    assert r.errors == (0, 0) and r.tombstones == (0, 1) and not r.group.pending and r.group.offsets == (NO_COMMIT,) * 2
    # 3.7.x: only the committed one, the pending offset stays
    r = delete_offsets(g, (0, 1), subscribed=False, new_coordinator=True, pending_aware=False)
    assert r.tombstones == (1,) and r.group.pending == g.pending
    # the classic coordinator: a tombstone for the committed one, the pending offset dropped in memory
    r = delete_offsets(g, (0, 1), subscribed=False, new_coordinator=False, pending_aware=False)
    assert r.tombstones == (1,) and not r.group.pending
    r = delete_offsets(g, (0,), subscribed=True, new_coordinator=True, pending_aware=True)
    assert r.errors == (int(Errors.GROUP_SUBSCRIBED_TO_TOPIC),) and r.group == g and not r.tombstones


def test_offset_retention_per_version() -> None:
    g = new_group(2)._replace(offsets=(CommittedOffset(100, 0), NO_COMMIT), pending=(PendingTxnOffset(10, 0, 101, 1),))
    ts, unsubscribed = {0: 1000}, frozenset({0, 1})
    # 3.8.0+: the pending offset keeps foo-0 and the group
    r = cleanup_expired_offsets(g, ts, unsubscribed, 61000, 60000, pending_aware=True, keep_with_open_txns=False)
    assert r == (ExpiryResult((), g, False))
    # not yet expired a millisecond earlier; a subscribed topic never expires
    assert not cleanup_expired_offsets(g, ts, unsubscribed, 60999, 60000, pending_aware=False,
                                       keep_with_open_txns=False).tombstones
    assert not cleanup_expired_offsets(g, ts, frozenset(), 61000, 60000, pending_aware=False,
                                       keep_with_open_txns=False).tombstones
    # 3.7.x: it expires and the group may go
    r = cleanup_expired_offsets(g, ts, unsubscribed, 61000, 60000, pending_aware=False, keep_with_open_txns=False)
    assert r.tombstones == (0,) and r.deletable
    # no committed offset left: deletable until KAFKA-19163 while a transaction is open
    only_pending = g._replace(offsets=(NO_COMMIT, NO_COMMIT))
    assert cleanup_expired_offsets(only_pending, {}, unsubscribed, 0, 1, pending_aware=True,
                                   keep_with_open_txns=False).deletable
    assert not cleanup_expired_offsets(only_pending, {}, unsubscribed, 0, 1, pending_aware=True,
                                       keep_with_open_txns=True).deletable
    assert {n for n, p in PROFILE_TABLE.items() if p.protocol.expiry_keeps_group_with_open_txns} == {
        n for n, p in PROFILE_TABLE.items() if p.first >= (4, 0, 1)}


def test_offset_delete_pending_switches_at_3_8() -> None:
    assert {n for n, p in PROFILE_TABLE.items() if p.protocol.offset_delete_pending} == {
        n for n, p in PROFILE_TABLE.items() if p.first >= (3, 8, 0)}


def test_the_coverage_table_names_each_vector() -> None:
    assert_coverage_table_names_vectors(MORE14)
