"""§6.3 and §1.3: the timeout abort with (and without) the epoch bump, and InitProducerId on Ongoing."""

import pytest
from eoscheck.model.transactions.add_partitions import add_partitions_to_txn
from eoscheck.model.transactions.codes import NO_PENDING, Errors, TxnResult, TxnState
from eoscheck.model.transactions.end_txn import end_txn
from eoscheck.model.transactions.markers import markers_to_send
from eoscheck.model.transactions.metadata import TxnMeta
from eoscheck.model.transactions.states import is_valid_transition
from eoscheck.model.transactions.timeout import abort_timed_out, can_time_out, init_producer_id_on_ongoing

S, E, R = TxnState, Errors, TxnResult
PID, EPOCH, MAX = 9, 2, 10


def ongoing(epoch=EPOCH, failed=False, pending=NO_PENDING):
    return TxnMeta(True, PID, PID, epoch, epoch - 1, int(S.ONGOING), failed, int(pending), (0, 1))


def test_timeout_abort_bumps_epoch_and_sends_abort_markers_with_it():
    out = abort_timed_out(ongoing(), max_epoch=MAX)
    assert out.error == E.NONE and out.wrote
    assert (out.meta.state, out.meta.epoch, out.meta.last_epoch) == (S.PREPARE_ABORT, EPOCH + 1, -1)
    assert is_valid_transition(S.ONGOING, out.meta.state)
    assert {(mk.producer_epoch, mk.result) for mk in markers_to_send(out.meta, 0)} == {(EPOCH + 1, R.ABORT)}


def test_after_the_bumped_abort_the_old_producer_is_fenced_at_the_coordinator():
    aborted = abort_timed_out(ongoing(), max_epoch=MAX).meta._replace(state=int(S.COMPLETE_ABORT), partitions=())
    assert end_txn(aborted, PID, EPOCH, R.COMMIT).error == E.PRODUCER_FENCED
    assert add_partitions_to_txn(aborted, PID, EPOCH, (2,)).error == E.PRODUCER_FENCED


def test_without_the_bump_the_old_producer_starts_a_new_transaction_with_its_epoch():
    out = abort_timed_out(ongoing(), max_epoch=MAX, bump_epoch=False)
    assert (out.meta.state, out.meta.epoch) == (S.PREPARE_ABORT, EPOCH)
    aborted = out.meta._replace(state=int(S.COMPLETE_ABORT), partitions=())
    # the zombie's AddOffsetsToTxn opens a fresh transaction and its commit succeeds
    again = add_partitions_to_txn(aborted, PID, EPOCH, (5,))
    assert (again.error, again.meta.state) == (E.NONE, S.ONGOING)
    assert end_txn(again.meta, PID, EPOCH, R.COMMIT).error == E.NONE


def test_failed_fence_does_not_bump_again():
    out = abort_timed_out(ongoing(failed=True), max_epoch=MAX)
    assert out.meta.epoch == EPOCH


def test_fence_at_max_epoch_does_not_bump():
    assert abort_timed_out(ongoing(epoch=MAX), max_epoch=MAX).meta.epoch == MAX


@pytest.mark.parametrize("state", [S.EMPTY, S.PREPARE_COMMIT, S.PREPARE_ABORT, S.COMPLETE_COMMIT, S.COMPLETE_ABORT])
def test_only_ongoing_transactions_time_out(state):
    m = ongoing()._replace(state=int(state))
    assert not can_time_out(m)
    assert abort_timed_out(m, max_epoch=MAX) == (E.NONE, m, False)


def test_pending_transition_does_not_time_out():
    assert not can_time_out(ongoing(pending=S.PREPARE_COMMIT))


def test_init_producer_id_on_ongoing_fences_aborts_and_answers_concurrent_transactions():
    out = init_producer_id_on_ongoing(ongoing(), max_epoch=MAX)
    assert (out.error, out.meta.state, out.meta.epoch, out.wrote) == (
        E.CONCURRENT_TRANSACTIONS, S.PREPARE_ABORT, EPOCH + 1, True)


def test_tv2_fence_abort_bumps_twice_so_the_old_producer_is_neither_current_nor_retry():
    from eoscheck.model.transactions.end_txn import end_txn_tv2

    out = abort_timed_out(ongoing(), max_epoch=MAX, tv2=True)
    assert (out.meta.state, out.meta.epoch, out.meta.last_epoch) == (S.PREPARE_ABORT, EPOCH + 2, EPOCH + 1)
    done = out.meta._replace(state=int(S.COMPLETE_ABORT), partitions=())
    assert end_txn_tv2(done, PID, EPOCH, R.ABORT).error == E.PRODUCER_FENCED


def test_tv2_fence_abort_after_kafka_19367_bumps_once_so_the_old_producers_abort_is_a_retry():
    # fidelity audit B3: KAFKA-19367 removed prepareAbortOrCommit's second bump after a fence
    from eoscheck.model.transactions.end_txn import end_txn_tv2

    out = abort_timed_out(ongoing(), max_epoch=MAX, tv2=True, tv2_double_bump=False)
    assert (out.meta.state, out.meta.epoch) == (S.PREPARE_ABORT, EPOCH + 1)
    done = out.meta._replace(state=int(S.COMPLETE_ABORT), partitions=())
    assert end_txn_tv2(done, PID, EPOCH, R.ABORT).error == E.NONE  # a retry of the abort
    assert end_txn_tv2(done, PID, EPOCH, R.COMMIT).error == E.INVALID_TXN_STATE
    fenced = init_producer_id_on_ongoing(ongoing(), max_epoch=MAX, tv2=True, tv2_double_bump=False)
    assert fenced.meta.epoch == EPOCH + 1


def test_tv2_fence_abort_after_kafka_19367_writes_what_prepare_abort_or_commit_writes():
    """4.0.1's endTransaction installs nothing for the fence and ``prepareAbortOrCommit`` bumps the epoch in memory
    at the server's version: lastProducerEpoch is the fenced producer's epoch and the record is TV2, the same
    metadata a client's own TV2 abort writes; 4.0.0's fence (and TV1's) writes lastProducerEpoch -1."""
    from eoscheck.model.transactions.end_txn import end_txn_tv2

    for call in (lambda **kw: abort_timed_out(ongoing(), max_epoch=MAX, tv2=True, **kw),
                 lambda **kw: init_producer_id_on_ongoing(ongoing(), max_epoch=MAX, tv2=True, **kw)):
        single = call(tv2_double_bump=False).meta
        assert (single.epoch, single.last_epoch, single.tv, single.pending_state) == (EPOCH + 1, EPOCH, 2, -1)
        assert single == end_txn_tv2(ongoing()._replace(tv=2), PID, EPOCH, R.ABORT).meta._replace(
            tv=single.tv, prev_producer_id=single.prev_producer_id)
        double = call(tv2_double_bump=True).meta
        assert (double.epoch, double.last_epoch) == (EPOCH + 2, EPOCH + 1)
    assert abort_timed_out(ongoing(), max_epoch=MAX, tv2=False).meta.last_epoch == -1
    # at the largest epoch the fence keeps it (Kafka throws; no TV2 producer holds it): no bump past max_epoch
    top = abort_timed_out(ongoing()._replace(epoch=MAX), max_epoch=MAX, tv2=True, tv2_double_bump=False).meta
    assert top.epoch == MAX
