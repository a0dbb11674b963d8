"""Conformance of the transaction coordinator's state machine with kafka-semantics.md §6 (states,
AddPartitionsToTxn, EndTxn TV1, timeout abort and fencing, markers on coordinator and leader,
transaction log record and failover load, LSO / read_committed)."""

from __future__ import annotations

import pytest
from eoscheck.model.transactions.add_partitions import add_partitions_to_txn
from eoscheck.model.transactions.codes import NO_PENDING, Errors, TxnResult, TxnState
from eoscheck.model.transactions.end_txn import end_txn
from eoscheck.model.transactions.failover import load_transaction
from eoscheck.model.transactions.log import EntryKind, LogEntry, last_stable_offset, read_committed
from eoscheck.model.transactions.markers import (
    append_end_txn_marker,
    complete_if_done,
    markers_to_send,
    on_marker_response,
)
from eoscheck.model.transactions.metadata import TxnMeta, from_log_record, to_log_record
from eoscheck.model.transactions.states import is_valid_transition
from eoscheck.model.transactions.timeout import abort_timed_out, fence_and_abort, init_producer_id_on_ongoing

S = TxnState
P = 11
MAX = 32767
COMMIT, ABORT = int(TxnResult.COMMIT), int(TxnResult.ABORT)


def meta(state: S, epoch: int = 4, partitions: tuple[int, ...] = (), pending: int = NO_PENDING,
         failed_fence: bool = False, last: int = -1) -> TxnMeta:
    return TxnMeta(exists=True, producer_id=P, prev_producer_id=P, epoch=epoch, last_epoch=last, state=int(state),
                   has_failed_epoch_fence=failed_fence, pending_state=pending, partitions=partitions)


# --- §6.1 valid previous states ------------------------------------------------------------------------

TABLE = {
    S.EMPTY: {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
    S.ONGOING: {S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
    S.PREPARE_COMMIT: {S.ONGOING},
    S.PREPARE_ABORT: {S.ONGOING, S.PREPARE_EPOCH_FENCE},
    S.COMPLETE_COMMIT: {S.PREPARE_COMMIT},
    S.COMPLETE_ABORT: {S.PREPARE_ABORT},
    S.DEAD: {S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT},
    S.PREPARE_EPOCH_FENCE: {S.ONGOING},
}


@pytest.mark.parametrize("target", list(S))
def test_valid_previous_states(target: S) -> None:
    for current in S:
        assert is_valid_transition(int(current), int(target)) == (current in TABLE[target]), (current, target)


def test_tv2_abort_from_empty_allowed_only_with_tv2() -> None:
    assert not is_valid_transition(int(S.EMPTY), int(S.PREPARE_ABORT))
    assert is_valid_transition(int(S.EMPTY), int(S.PREPARE_ABORT), tv2=True)


# --- §6.1 AddPartitionsToTxn / AddOffsetsToTxn ---------------------------------------------------------

def test_add_partitions_unknown_tid_invalid_mapping() -> None:
    assert add_partitions_to_txn(None, P, 4, (0,)).error == Errors.INVALID_PRODUCER_ID_MAPPING


def test_add_partitions_pid_mismatch_before_epoch() -> None:
    assert add_partitions_to_txn(meta(S.EMPTY), P + 1, 3, (0,)).error == Errors.INVALID_PRODUCER_ID_MAPPING


@pytest.mark.parametrize("epoch", [3, 5])
def test_add_partitions_epoch_mismatch_fenced(epoch: int) -> None:
    assert add_partitions_to_txn(meta(S.ONGOING), P, epoch, (0,)).error == Errors.PRODUCER_FENCED


def test_add_partitions_pending_concurrent() -> None:
    out = add_partitions_to_txn(meta(S.ONGOING, pending=int(S.PREPARE_COMMIT)), P, 4, (0,))
    assert out.error == Errors.CONCURRENT_TRANSACTIONS


@pytest.mark.parametrize("state", [S.PREPARE_COMMIT, S.PREPARE_ABORT])
def test_add_partitions_prepare_concurrent(state: S) -> None:
    assert add_partitions_to_txn(meta(state, partitions=(0,)), P, 4, (1,)).error == Errors.CONCURRENT_TRANSACTIONS


def test_add_partitions_already_added_no_write() -> None:
    m = meta(S.ONGOING, partitions=(0, 1))
    out = add_partitions_to_txn(m, P, 4, (1,))
    assert (out.error, out.wrote, out.meta) == (Errors.NONE, False, m)


@pytest.mark.parametrize("state", [S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT, S.ONGOING])
def test_add_partitions_moves_to_ongoing(state: S) -> None:
    out = add_partitions_to_txn(meta(state, partitions=(0,) if state == S.ONGOING else ()), P, 4, (1,))
    assert (out.error, out.wrote, out.meta.state) == (Errors.NONE, True, S.ONGOING)
    assert set(out.meta.partitions) == ({0, 1} if state == S.ONGOING else {1})
    assert out.meta.epoch == 4


# --- §6.2 EndTxn (TV1) ---------------------------------------------------------------------------------

def test_end_txn_unknown_tid() -> None:
    assert end_txn(None, P, 4, COMMIT).error == Errors.INVALID_PRODUCER_ID_MAPPING
    assert end_txn(meta(S.EMPTY)._replace(exists=False), P, 4, COMMIT).error == Errors.INVALID_PRODUCER_ID_MAPPING


def test_end_txn_pid_mismatch() -> None:
    assert end_txn(meta(S.ONGOING), P + 1, 4, COMMIT).error == Errors.INVALID_PRODUCER_ID_MAPPING


@pytest.mark.parametrize("epoch", [3, 5])
def test_end_txn_client_epoch_must_equal(epoch: int) -> None:
    assert end_txn(meta(S.ONGOING), P, epoch, COMMIT).error == Errors.PRODUCER_FENCED


def test_end_txn_coordinator_higher_epoch_valid() -> None:
    out = end_txn(meta(S.ONGOING, partitions=(0,)), P, 5, ABORT, is_from_client=False)
    assert out.error == Errors.NONE and out.meta.state == S.PREPARE_ABORT
    assert end_txn(meta(S.ONGOING), P, 3, ABORT, is_from_client=False).error == Errors.PRODUCER_FENCED


def test_end_txn_pending_concurrent() -> None:
    out = end_txn(meta(S.ONGOING, pending=int(S.PREPARE_COMMIT)), P, 4, COMMIT)
    assert out.error == Errors.CONCURRENT_TRANSACTIONS


@pytest.mark.parametrize("state,result,error,moves_to", [
    (S.ONGOING, COMMIT, Errors.NONE, S.PREPARE_COMMIT),
    (S.ONGOING, ABORT, Errors.NONE, S.PREPARE_ABORT),
    (S.COMPLETE_COMMIT, COMMIT, Errors.NONE, None),
    (S.COMPLETE_COMMIT, ABORT, Errors.INVALID_TXN_STATE, None),
    (S.COMPLETE_ABORT, ABORT, Errors.NONE, None),
    (S.COMPLETE_ABORT, COMMIT, Errors.INVALID_TXN_STATE, None),
    (S.PREPARE_COMMIT, COMMIT, Errors.CONCURRENT_TRANSACTIONS, None),
    (S.PREPARE_COMMIT, ABORT, Errors.INVALID_TXN_STATE, None),
    (S.PREPARE_ABORT, ABORT, Errors.CONCURRENT_TRANSACTIONS, None),
    (S.PREPARE_ABORT, COMMIT, Errors.INVALID_TXN_STATE, None),
    (S.EMPTY, COMMIT, Errors.INVALID_TXN_STATE, None),
    (S.EMPTY, ABORT, Errors.INVALID_TXN_STATE, None),
])
def test_end_txn_by_state(state: S, result: int, error: Errors, moves_to: S | None) -> None:
    m = meta(state, partitions=(0,) if state == S.ONGOING else ())
    out = end_txn(m, P, 4, result)
    assert out.error == error
    if moves_to is None:
        assert (out.wrote, out.meta) == (False, m)  # idempotent retry / refusal: nothing written
    else:
        assert (out.wrote, out.meta.state, out.meta.epoch) == (True, moves_to, 4)  # TV1: no bump
        assert out.meta.partitions == (0,)


def test_end_txn_tv2_bumps_epoch() -> None:
    out = end_txn(meta(S.ONGOING, partitions=(0,)), P, 4, COMMIT, tv2_bump=True)
    assert (out.meta.epoch, out.meta.last_epoch) == (5, 4)


# --- §6.3 timeout abort and fence on InitProducerId ------------------------------------------------------

def test_timeout_abort_bumps_epoch_and_clears_last() -> None:
    out = abort_timed_out(meta(S.ONGOING, epoch=4, last=3, partitions=(0, 1)), max_epoch=MAX)
    assert out.error == Errors.NONE and out.wrote
    assert (out.meta.state, out.meta.epoch, out.meta.last_epoch) == (S.PREPARE_ABORT, 5, -1)
    assert out.meta.pending_state == NO_PENDING
    # the ABORT markers carry the bumped epoch (§6.3/§6.5)
    assert {(mk.producer_epoch, mk.result) for mk in markers_to_send(out.meta, 0)} == {(5, ABORT)}


def test_timeout_abort_after_failed_fence_keeps_epoch() -> None:
    out = abort_timed_out(meta(S.ONGOING, epoch=5, partitions=(0,), failed_fence=True), max_epoch=MAX)
    assert out.meta.epoch == 5


@pytest.mark.parametrize("state", [S.EMPTY, S.PREPARE_COMMIT, S.COMPLETE_ABORT])
def test_only_ongoing_times_out(state: S) -> None:
    out = abort_timed_out(meta(state), max_epoch=MAX)
    assert not out.wrote


def test_ongoing_with_pending_does_not_time_out() -> None:
    assert not abort_timed_out(meta(S.ONGOING, pending=int(S.PREPARE_COMMIT)), max_epoch=MAX).wrote


def test_init_producer_id_on_ongoing_fences_and_answers_concurrent() -> None:
    out = init_producer_id_on_ongoing(meta(S.ONGOING, epoch=4, partitions=(0,)), max_epoch=MAX)
    assert out.error == Errors.CONCURRENT_TRANSACTIONS
    assert (out.meta.state, out.meta.epoch, out.meta.last_epoch) == (S.PREPARE_ABORT, 5, -1)


def test_fence_at_exhausted_epoch_reaches_max() -> None:
    out = fence_and_abort(meta(S.ONGOING, epoch=MAX - 1, partitions=(0,)), max_epoch=MAX)
    assert out.meta.epoch == MAX


# --- §6.5 markers ------------------------------------------------------------------------------------------

def test_markers_one_per_partition_with_current_epoch() -> None:
    m = meta(S.PREPARE_COMMIT, epoch=7, partitions=(0, 1))
    ms = markers_to_send(m, 3)
    assert sorted((x.partition, x.producer_id, x.producer_epoch, x.result, x.coordinator_epoch) for x in ms) == [
        (0, P, 7, COMMIT, 3), (1, P, 7, COMMIT, 3)]


def test_no_markers_outside_prepare() -> None:
    assert markers_to_send(meta(S.ONGOING, partitions=(0,)), 0) == ()


def test_marker_none_removes_partition_then_complete() -> None:
    m = meta(S.PREPARE_ABORT, partitions=(0, 1), failed_fence=True)
    m = on_marker_response(m, 0, int(Errors.NONE)).meta
    assert complete_if_done(m)[1] is False
    m = on_marker_response(m, 1, int(Errors.NONE)).meta
    done, wrote = complete_if_done(m)
    assert wrote and done.state == S.COMPLETE_ABORT and done.partitions == ()
    assert done.has_failed_epoch_fence is False  # cleared in prepareComplete


@pytest.mark.parametrize("err", [Errors.INVALID_PRODUCER_EPOCH, Errors.TRANSACTION_COORDINATOR_FENCED])
def test_marker_abandon(err: Errors) -> None:
    out = on_marker_response(meta(S.PREPARE_COMMIT, partitions=(0,)), 0, int(err))
    assert out.abandon and not out.retry and out.meta.partitions == (0,)


@pytest.mark.parametrize("err", [Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_LEADER_OR_FOLLOWER,
                                 Errors.REQUEST_TIMED_OUT])
def test_marker_retry(err: Errors) -> None:
    out = on_marker_response(meta(S.PREPARE_COMMIT, partitions=(0,)), 0, int(err))
    assert out.retry and not out.abandon


@pytest.mark.parametrize("stored,stored_ce,marker_epoch,marker_ce,error", [
    (5, 2, 4, 2, Errors.INVALID_PRODUCER_EPOCH),
    (5, 2, 5, 1, Errors.TRANSACTION_COORDINATOR_FENCED),
    (5, 2, 4, 1, Errors.INVALID_PRODUCER_EPOCH),  # the epoch is checked first
    (5, 2, 5, 2, Errors.NONE),
    (5, 2, 6, 3, Errors.NONE),
    (-1, -1, 0, 0, Errors.NONE),
])
def test_leader_marker_checks(stored: int, stored_ce: int, marker_epoch: int, marker_ce: int, error: Errors) -> None:
    mk = markers_to_send(meta(S.PREPARE_ABORT, epoch=marker_epoch, partitions=(0,)), marker_ce)[0]
    out = append_end_txn_marker(stored, stored_ce, mk)
    assert out.error == error
    if error == Errors.NONE:
        assert (out.epoch, out.coordinator_epoch) == (marker_epoch, marker_ce)  # a higher marker epoch bumps
    else:
        assert (out.epoch, out.coordinator_epoch) == (stored, stored_ce)


# --- §6.6 / §1.6 transaction log record and failover load -------------------------------------------------

def test_log_record_has_no_last_epoch_and_load_sets_minus_one() -> None:
    m = meta(S.EMPTY, epoch=6, last=5)
    loaded = from_log_record(to_log_record(m))
    assert loaded.last_epoch == -1
    assert (loaded.producer_id, loaded.epoch, loaded.state) == (P, 6, S.EMPTY)


def test_snapshot_does_not_persist_previous_producer_id() -> None:
    m = TxnMeta(exists=True, producer_id=P, prev_producer_id=3, epoch=0, last_epoch=32766, state=int(S.EMPTY),
                has_failed_epoch_fence=False, pending_state=NO_PENDING, partitions=())
    assert from_log_record(to_log_record(m)).prev_producer_id == -1
    assert from_log_record(to_log_record(m, persist_previous_producer_id=True)).prev_producer_id == 3


def test_load_forgets_pending_and_failed_fence() -> None:
    m = meta(S.PREPARE_ABORT, partitions=(0,), pending=int(S.COMPLETE_ABORT), failed_fence=True)
    loaded = from_log_record(to_log_record(m))
    assert loaded.pending_state == NO_PENDING and loaded.has_failed_epoch_fence is False


def test_failover_resends_markers_of_prepare_with_new_coordinator_epoch() -> None:
    rec = to_log_record(meta(S.PREPARE_COMMIT, epoch=8, partitions=(0, 1)))
    loaded, markers = load_transaction(rec, 4)
    assert loaded.state == S.PREPARE_COMMIT
    assert sorted((x.partition, x.producer_epoch, x.result, x.coordinator_epoch) for x in markers) == [
        (0, 8, COMMIT, 4), (1, 8, COMMIT, 4)]


def test_failover_complete_state_sends_nothing() -> None:
    _, markers = load_transaction(to_log_record(meta(S.COMPLETE_COMMIT)), 4)
    assert markers == ()


# --- LSO and read_committed (§7.3) ------------------------------------------------------------------------

def test_lso_is_first_offset_of_earliest_open_transaction() -> None:
    log = (LogEntry(1, 0, int(EntryKind.DATA), 100), LogEntry(2, 0, int(EntryKind.TXN_DATA), 101),
           LogEntry(3, 0, int(EntryKind.TXN_DATA), 102), LogEntry(3, 0, int(EntryKind.COMMIT), 0))
    assert last_stable_offset(log) == 1
    assert [e.value for _, e in read_committed(log)] == [100]


def test_read_committed_skips_aborted() -> None:
    log = (LogEntry(2, 0, int(EntryKind.TXN_DATA), 101), LogEntry(3, 0, int(EntryKind.TXN_DATA), 102),
           LogEntry(2, 1, int(EntryKind.ABORT), 0), LogEntry(3, 0, int(EntryKind.COMMIT), 0))
    assert last_stable_offset(log) == 4
    assert [e.value for _, e in read_committed(log)] == [102]


# --- §6.4 TV2 (KIP-890 part 2) EndTxn, later-trunk table ---------------------------------------------------

def _tv2():
    from eoscheck.model.transactions.end_txn import end_txn_tv2
    return end_txn_tv2


@pytest.mark.parametrize("result", [COMMIT, ABORT])
def test_tv2_ongoing_current_bumps_into_prepare(result: int) -> None:
    out = _tv2()(meta(S.ONGOING, epoch=4, partitions=(0,)), P, 4, result)
    assert out.error == Errors.NONE and out.wrote
    assert (out.meta.epoch, out.meta.last_epoch) == (5, 4)
    assert out.meta.state == (S.PREPARE_COMMIT if result == COMMIT else S.PREPARE_ABORT)


@pytest.mark.parametrize("epoch", [3, 5])
def test_tv2_ongoing_other_epoch_fenced(epoch: int) -> None:
    assert _tv2()(meta(S.ONGOING, epoch=4), P, epoch, COMMIT).error == Errors.PRODUCER_FENCED


@pytest.mark.parametrize("state,result,epoch,error,bumps", [
    # Empty: Abort-retry -> PF, Abort-current -> epoch bump, Commit -> ITS/PF
    (S.EMPTY, ABORT, 3, Errors.PRODUCER_FENCED, False),
    (S.EMPTY, ABORT, 4, Errors.NONE, True),
    (S.EMPTY, COMMIT, 4, Errors.INVALID_TXN_STATE, False),
    # CompleteAbort: Abort-retry -> NONE, Abort-current -> EB, Commit -> ITS
    (S.COMPLETE_ABORT, ABORT, 3, Errors.NONE, False),
    (S.COMPLETE_ABORT, ABORT, 4, Errors.NONE, True),
    (S.COMPLETE_ABORT, COMMIT, 3, Errors.INVALID_TXN_STATE, False),
    (S.COMPLETE_ABORT, COMMIT, 4, Errors.INVALID_TXN_STATE, False),
    # CompleteCommit: Commit-retry -> NONE, Commit-current -> ITS, Abort-retry -> ITS, Abort-current -> EB
    (S.COMPLETE_COMMIT, COMMIT, 3, Errors.NONE, False),
    (S.COMPLETE_COMMIT, COMMIT, 4, Errors.INVALID_TXN_STATE, False),
    (S.COMPLETE_COMMIT, ABORT, 3, Errors.INVALID_TXN_STATE, False),
    (S.COMPLETE_COMMIT, ABORT, 4, Errors.NONE, True),
    # PrepareX: only a retry (epoch + 1 == meta epoch) is valid
    (S.PREPARE_COMMIT, COMMIT, 3, Errors.CONCURRENT_TRANSACTIONS, False),
    (S.PREPARE_COMMIT, ABORT, 3, Errors.INVALID_TXN_STATE, False),
    (S.PREPARE_ABORT, ABORT, 3, Errors.CONCURRENT_TRANSACTIONS, False),
    (S.PREPARE_COMMIT, COMMIT, 4, Errors.PRODUCER_FENCED, False),
])
def test_tv2_table(state: S, result: int, epoch: int, error: Errors, bumps: bool) -> None:
    m = meta(state, epoch=4)
    out = _tv2()(m, P, epoch, result)
    assert out.error == error
    if bumps:
        # an abort with no partitions (Empty/CompleteX -> PrepareAbort) bumps the epoch
        assert out.wrote and out.meta.state == S.PREPARE_ABORT and (out.meta.epoch, out.meta.last_epoch) == (5, 4)
    else:
        assert not out.wrote and out.meta == m


def test_tv2_pid_mismatch_invalid_mapping() -> None:
    assert _tv2()(meta(S.ONGOING), P + 1, 4, COMMIT).error == Errors.INVALID_PRODUCER_ID_MAPPING


def test_tv2_fence_abort_double_bump() -> None:
    # §6.3 note (unverified in Kafka's tests): fence epoch+1, then TV2 prepareAbortOrCommit bumps again
    out = fence_and_abort(meta(S.ONGOING, epoch=4, partitions=(0,)), max_epoch=MAX, tv2=True)
    assert (out.meta.state, out.meta.epoch, out.meta.last_epoch) == (S.PREPARE_ABORT, 6, 5)
