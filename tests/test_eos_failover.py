"""Leader failover of kafka.eos's transactional output partitions (``eos_failover``, ``partition.replica``),
KAFKA-9144's producer timestamps and the transaction-version-2 marker epoch check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from eoscheck.checker.cli import main
from eoscheck.checker.compose.testing import compare_memo
from eoscheck.model.errors import Errors
from eoscheck.model.machines.eos import EosMachine, machine
from eoscheck.model.machines.eos_failover import (
    IN_SYNC,
    REBUILT,
    SNAPSHOT,
    TXN_FAILOVER_BOUNDS,
)
from eoscheck.model.machines.eos_model import MODEL
from eoscheck.model.partition.producer_state import empty_entry, find_entry
from eoscheck.model.partition.replica import (
    NO_TIMESTAMP,
    StampedEntry,
    rebuilt_from_log,
    restored_from_snapshot,
    snapshot_at,
)
from eoscheck.model.partition.txn_produce import (
    producer_state_lso,
    tv2_marker_refused,
    write_marker,
)
from eoscheck.model.protocol import VARIANTS
from eoscheck.model.state import CachedBatch, ProduceRequest, Routed, TxnPartitionState
from eoscheck.model.transactions.codes import TxnResult
from eoscheck.model.transactions.log import EntryKind
from eoscheck.model.transactions.markers import TxnMarker
from reachable_states import reachable

D, C, A = int(EntryKind.TXN_DATA), int(EntryKind.COMMIT), int(EntryKind.ABORT)
SPECS = Path(__file__).resolve().parent.parent / "specs"


def data(pid: int, epoch: int, seq: int, ts: int = 0) -> StampedEntry:
    return StampedEntry(pid, epoch, D, 0, seq, ts)


def marker(pid: int, epoch: int, kind: int = A, coordinator_epoch: int = 0, ts: int = 0) -> StampedEntry:
    return StampedEntry(pid, epoch, kind, coordinator_epoch, -1, ts)


def leader(*log: StampedEntry, start: int = 0) -> TxnPartitionState:
    return TxnPartitionState(tuple(log), start, ())


def rebuilt(part: TxnPartitionState, *, sets_timestamp: bool = True) -> tuple:
    return rebuilt_from_log(part, cache_size=5, sets_timestamp=sets_timestamp)


def restored(part: TxnPartitionState, offset: int, *, now: int = 0, expiration: int = 1,
             sets_timestamp: bool = True, retain: bool = True) -> tuple:
    return restored_from_snapshot(part, offset, now=now, expiration=expiration, cache_size=5,
                                  sets_timestamp=sets_timestamp, retain_producer_state=retain)


# --- partition.replica --------------------------------------------------------------------------------


def test_a_replica_restarted_from_its_log_rebuilds_batches_markers_and_open_transactions() -> None:
    part = leader(data(0, 0, 0, ts=1), data(0, 0, 1, ts=2), marker(0, 0, C, coordinator_epoch=3, ts=4),
                  data(1, 2, 7, ts=5))
    producers = rebuilt(part)
    closed, open_ = find_entry(producers, 0), find_entry(producers, 1)
    assert closed is not None and open_ is not None
    assert closed.batches == (CachedBatch(0, 0), CachedBatch(1, 1)) and closed.current_txn_first_offset == -1
    assert (closed.coordinator_epoch, closed.last_timestamp) == (3, 4)
    assert (open_.epoch, open_.batches, open_.current_txn_first_offset) == (2, (CachedBatch(7, 3),), 3)
    assert producer_state_lso(part._replace(producers=producers)) == 3


def test_a_rebuild_starts_at_the_log_start_offset() -> None:
    part = leader(data(0, 0, 0), marker(0, 0, C), data(1, 0, 0), start=2)
    assert [e.producer_id for e in rebuilt(part)] == [1]


def test_a_snapshot_that_predates_the_first_batch_gets_the_open_transaction_back_by_replay() -> None:
    part = leader(data(0, 0, 0), marker(0, 0, C), data(0, 0, 1), data(0, 0, 2))
    for offset in range(len(part.log) + 1):
        producers = restored(part, offset)
        assert producer_state_lso(part._replace(producers=producers)) == 2, offset
    # a snapshot keeps one batch per producer; the replay above it adds the later ones
    assert find_entry(snapshot_at(part, 4, cache_size=5, sets_timestamp=True, retain_producer_state=True),
                      0).batches == (CachedBatch(2, 3),)
    assert find_entry(restored(part, 2), 0).batches == (CachedBatch(0, 0), CachedBatch(1, 2), CachedBatch(2, 3))
    assert find_entry(restored(part, 4), 0).batches == (CachedBatch(2, 3),)


def test_before_kafka_9144_a_marker_only_producer_is_skipped_when_a_snapshot_is_loaded() -> None:
    # data at epoch 0, then the timeout abort's ABORT marker at epoch 1 clears the cached batches
    part = leader(data(0, 0, 0, ts=0), marker(0, 1, A, ts=0))
    fixed = find_entry(restored(part, 2), 0)
    assert fixed is not None and (fixed.epoch, fixed.last_timestamp) == (1, 0)
    assert find_entry(restored(part, 2, sets_timestamp=False), 0) is None
    # replayed above the snapshot the entry is rebuilt (epoch 1), only its next expiry check drops it
    again = find_entry(restored(part, 1, sets_timestamp=False), 0)
    assert again is not None and (again.epoch, again.last_timestamp) == (1, NO_TIMESTAMP)


def test_before_kafka_9144_a_marker_keeps_the_data_timestamp_or_none() -> None:
    entry = empty_entry(0)._replace(epoch=0, batches=(CachedBatch(0, 0),), last_timestamp=3,
                                    current_txn_first_offset=0)
    part = TxnPartitionState((data(0, 0, 0, ts=3),), 0, (entry,))
    same = TxnMarker(0, 0, 0, int(TxnResult.COMMIT), 0)
    bumped = TxnMarker(0, 0, 1, int(TxnResult.ABORT), 0)
    for m, fixed_ts, old_ts in ((same, 9, 3), (bumped, 9, NO_TIMESTAMP)):
        _, after = write_marker(part, m, timestamp=9, check_coordinator_epoch=True)
        _, before = write_marker(part, m, timestamp=9, check_coordinator_epoch=True, sets_timestamp=False)
        assert find_entry(after.producers, 0).last_timestamp == fixed_ts
        assert find_entry(before.producers, 0).last_timestamp == old_ts


@pytest.mark.parametrize(("check", "marker_epoch", "stored", "open_txn", "refused"), [
    ("lenient", 1, 1, False, False), ("lenient", 1, 1, True, False), ("strict", 1, 1, False, True),
    ("strict", 1, 1, True, True), ("strict", 2, 1, True, False), ("strict-retry", 1, 1, False, False),
    ("strict-retry", 1, 1, True, True), ("strict-retry", 0, 1, False, True), ("strict", 0, -1, False, False)])
def test_tv2_marker_epoch_check(check: str, marker_epoch: int, stored: int, open_txn: bool, refused: bool) -> None:
    entry = empty_entry(0)._replace(epoch=stored, current_txn_first_offset=0 if open_txn else -1)
    assert tv2_marker_refused(entry, TxnMarker(0, 0, marker_epoch, int(TxnResult.COMMIT), 0), check) == refused


def test_a_refused_tv2_marker_is_invalid_producer_epoch_and_writes_nothing() -> None:
    entry = empty_entry(0)._replace(epoch=1)
    part = TxnPartitionState((), 0, (entry,))
    m = TxnMarker(0, 0, 1, int(TxnResult.COMMIT), 0)
    assert write_marker(part, m, timestamp=0, check_coordinator_epoch=True, tv2_epoch_check="strict") == (
        int(Errors.INVALID_PRODUCER_EPOCH), part)
    error, written = write_marker(part, m, timestamp=0, check_coordinator_epoch=True, tv2_epoch_check="strict-retry")
    assert error == Errors.NONE and written.log[-1].kind == C


# --- the machine --------------------------------------------------------------------------------------


def test_zero_budgets_compile_nothing_and_keep_the_counts() -> None:
    m = machine("kafka-3.0-3.5")
    assert "TxnLeaderFailover" not in m.actions
    assert not any("output_" in k for k in m.fields(next(iter(m.init_states()))))
    # counts of /work/main before this mixin (variants whose behaviour it leaves alone); the second was
    # 17,815 until session 13, when a verification's PRODUCER_FENCED began to reach the producer as
    # INVALID_PRODUCER_EPOCH (AddPartitionsToTxnManager), on which it aborts instead of failing; the third
    # was 20,401 until session 14, when TxnOffsetCommit's verification got the same conversion (its fatal
    # INVALID_PRODUCER_EPOCH no longer merges with PRODUCER_FENCED); it was 20,806 until session 17, when 4.0+
    # coordinators answer an add (KAFKA-18660: 19,430) and a TV2 EndTxn (KAFKA-18464) meeting a transaction still
    # completing with CONCURRENT_TRANSACTIONS before their producer id / epoch checks; it was 19,318 until session 20,
    # when a single-bump TV2 fence-abort (KAFKA-19367, 4.0.1+) began to write prepareAbortOrCommit's record
    # (lastProducerEpoch = the fenced epoch, TV2), which a coordinator failover reloads; it was 19,618 until
    # session 27, when the __transaction_state record began to keep the client's transaction version and a
    # failover to reload it (TransactionLog's tagged ClientTransactionVersion, 1eb7644 .. 4.2.0-rc1): a reloaded
    # TV2 transaction no longer comes back at version 0
    assert len(reachable(machine("kafka-4.0", coordinator_failovers=1, transactions=2), 10_000)) == 530
    assert len(reachable(machine("kafka-trunk-2026", coordinator_failovers=1, txn_timeouts=1, input_records=1),
                         50_000)) == 19_317


def test_eoscheck_list_shows_the_bounds_and_decisions() -> None:
    for name, bound in TXN_FAILOVER_BOUNDS.items():
        assert MODEL.bounds[name] is bound and bound.default == 0 and bound.doc
    assert "KAFKA-9144" in MODEL.switches["marker_sets_producer_timestamp"].doc
    assert "KAFKA-19999" in MODEL.switches["tv2_marker_epoch_check"].doc
    assert not VARIANTS["kafka-2.4"].protocol.marker_sets_producer_timestamp
    assert VARIANTS["kafka-2.4.1"].protocol.marker_sets_producer_timestamp


def _failovers(m: EosMachine, s: tuple) -> list[tuple[tuple, Any]]:
    return [(step, m.view(t)) for step, t in m.successors(s) if step[0] == "TxnLeaderFailover"]


def test_requests_in_flight_to_the_old_leader_get_not_leader_or_follower() -> None:
    m = machine("kafka-3.0-3.5", partitions=2, output_leader_failovers=1)
    to_0 = Routed(0, 0, 0, 0, ProduceRequest(0, 0, 0, 0, 0, 0, 0))
    to_1 = Routed(1, 0, 0, 0, ProduceRequest(0, 0, 0, 0, 0, 0, 0))
    s = m.state(requests=(to_0, to_1))
    moved = {step[1]: t for step, t in m.successors(s) if step[0] == "TxnLeaderFailover"}
    assert set(moved) == {0, 1}
    after = m.view(moved[0])
    assert after.requests == (to_1,)
    (resp,) = after.responses
    assert (resp.partition, resp.client, resp.record) == (0, 0, 0)
    assert resp.message.error == Errors.NOT_LEADER_OR_FOLLOWER
    assert (m.fields(s)["faults.output_leader_failovers"], m.fields(moved[0])["faults.output_leader_failovers"]) == (0, 1)


def test_each_kind_spends_its_own_budget() -> None:
    for bound, kind in (("output_leader_failovers", IN_SYNC), ("output_restarted_replica_failovers", REBUILT),
                        ("output_snapshot_restored_failovers", SNAPSHOT)):
        m = machine("kafka-3.0-3.5", partitions=1, **{bound: 1})
        s = next(iter(m.init_states()))
        steps = [t for step, t in m.successors(s) if step[0] == "TxnLeaderFailover"]
        assert {step[2] for step, _ in _failovers(m, s)} == {kind}
        (spent,) = steps
        assert {k: v for k, v in m.fields(spent).items() if k.startswith("faults.output_")} == {
            f"faults.{b}": int(b == bound) for b in TXN_FAILOVER_BOUNDS}
        assert not _failovers(m, spent)


def test_a_failover_may_cut_the_answer_to_a_marker_the_old_leader_appended() -> None:
    m = machine("kafka-trunk-2026-01", partitions=1, output_leader_failovers=1)
    states = reachable(m, 5_000)
    cut = [(step, after) for s in states for step, after in _failovers(m, s) if step[-1] >= 0]
    assert cut
    for _step, after in cut:
        assert after.leader[0].log[-1].kind in (C, A)
        assert 0 in after.txn[0].partitions  # the coordinator still waits for partition 0's answer


def test_memoised_and_unmemoised_agree_with_failovers() -> None:
    bounds = {**{k: b.default for k, b in MODEL.bounds.items()}, "partitions": 1, "txn_timeouts": 1,
              "lost_responses": 1, "output_leader_failovers": 1, "output_restarted_replica_failovers": 1,
              "output_snapshot_restored_failovers": 1}
    compare_memo(lambda memoize: EosMachine(VARIANTS["kafka-2.4"].protocol, bounds, memoize=memoize), 3000)


# --- the spec pairs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("spec", "verdict"), [
    ("eos-snapshot-restore-fenced-producer-kafka-2.4.0", "NoHangingTransaction (9)"),
    ("eos-snapshot-restore-fenced-producer-kafka-2.4.1", "holds"),
    ("eos-marker-retry-new-leader-tv2-kafka-trunk-2025-12", "deadlock (14)"),
    ("eos-marker-retry-new-leader-tv2-kafka-trunk-2026-01", "holds"),
    ("eos-marker-retry-coordinator-failover-tv2-kafka-trunk-2025-12", "deadlock (15)"),
    ("eos-marker-retry-coordinator-failover-tv2-kafka-trunk-2026-01", "holds"),
    ("eos-early-expiry-fenced-producer-kafka-2.4.0", "NoHangingTransaction (10)"),
    ("eos-early-expiry-fenced-producer-kafka-2.4.1", "holds"),
    ("eos-restarted-replica-deleted-state-kafka-3.0", "NoHangingTransaction (10)"),
    ("eos-restarted-replica-deleted-state-kafka-3.6", "holds"),
    ("eos-ctp-output-leader-failover-kafka-3.0", "holds"),
])
def test_spec_pairs_meet_their_verdicts(spec: str, verdict: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", str(SPECS / f"{spec}.toml"), "--out", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert verdict.split(" (")[0] in out
    if "(" in verdict:
        assert (tmp_path / f"{spec}.{verdict.split(' ')[0]}.json").exists()


def test_a_bound_beyond_the_packed_budget_is_refused_in_one_line(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # each kind's counter has 2 bits of the packed slot: 3 is the most a bound may ask for
    code = main(["check", "--model", "kafka.eos", "--bound", "output_snapshot_restored_failovers=4",
                 "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "out of range 0..3" in err
