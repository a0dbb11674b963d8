"""§6.5 and §2.3: markers on the coordinator (send, answers, completion) and on the partition leader."""

import pytest
from eoscheck.checker.ops import CONCRETE
from eoscheck.model.transactions.codes import NO_PENDING, Errors, TxnResult, TxnState
from eoscheck.model.transactions.failover import load_transaction
from eoscheck.model.transactions.markers import (
    TxnMarker,
    append_end_txn_marker,
    complete_if_done,
    end_txn_marker_error,
    markers_to_send,
    on_marker_response,
)
from eoscheck.model.transactions.metadata import TxnMeta, to_log_record
from eoscheck.model.transactions.states import is_valid_transition

S, E, R = TxnState, Errors, TxnResult


def prepared(state=S.PREPARE_COMMIT, parts=(0, 3)):
    return TxnMeta(True, 5, 5, 2, 1, int(state), True, NO_PENDING, parts)


def test_one_marker_per_partition_with_current_epoch_and_coordinator_epoch():
    assert markers_to_send(prepared(), 4) == (TxnMarker(0, 5, 2, R.COMMIT, 4), TxnMarker(3, 5, 2, R.COMMIT, 4))
    assert {m.result for m in markers_to_send(prepared(S.PREPARE_ABORT), 4)} == {R.ABORT}


@pytest.mark.parametrize("state", [S.EMPTY, S.ONGOING, S.COMPLETE_COMMIT, S.COMPLETE_ABORT])
def test_no_markers_outside_prepare_states(state):
    assert markers_to_send(prepared()._replace(state=int(state)), 0) == ()


def test_acknowledged_partitions_leave_and_completion_follows_the_last():
    m = on_marker_response(prepared(), 0, E.NONE).meta
    assert m.partitions == (3,)
    assert complete_if_done(m) == (m, False)
    m = on_marker_response(m, 3, E.NONE).meta
    done, wrote = complete_if_done(m)
    assert wrote and (done.state, done.partitions, done.has_failed_epoch_fence) == (S.COMPLETE_COMMIT, (), False)
    assert is_valid_transition(S.PREPARE_COMMIT, done.state)
    aborted, _ = complete_if_done(prepared(S.PREPARE_ABORT, ()))
    assert aborted.state == S.COMPLETE_ABORT


@pytest.mark.parametrize("err", [E.NOT_LEADER_OR_FOLLOWER, E.UNKNOWN_TOPIC_OR_PARTITION, E.REQUEST_TIMED_OUT])
def test_retriable_marker_answers_resend(err):
    out = on_marker_response(prepared(), 0, err)
    assert (out.meta, out.retry, out.abandon) == (prepared(), True, False)


@pytest.mark.parametrize("err", [E.INVALID_PRODUCER_EPOCH, E.TRANSACTION_COORDINATOR_FENCED])
def test_fenced_marker_answers_abandon_the_transaction_in_prepare(err):
    out = on_marker_response(prepared(), 0, err)
    assert (out.meta, out.retry, out.abandon) == (prepared(), False, True)


# partition leader: (stored epoch, stored coordinator epoch, marker epoch, marker coordinator epoch) -> error
LEADER = [
    (-1, -1, 0, 0, E.NONE),  # no state for the producer
    (3, 1, 3, 1, E.NONE),
    (3, 1, 4, 1, E.NONE),  # a higher epoch (timeout abort) bumps the partition's producer epoch
    (3, 1, 2, 1, E.INVALID_PRODUCER_EPOCH),
    (3, 1, 3, 0, E.TRANSACTION_COORDINATOR_FENCED),
    (3, 1, 2, 0, E.INVALID_PRODUCER_EPOCH),  # epoch is checked first
    (3, 1, 3, 2, E.NONE),  # a newer coordinator
]


@pytest.mark.parametrize("se,sc,me,mc,err", LEADER)
def test_leader_marker_checks(se, sc, me, mc, err):
    assert end_txn_marker_error(CONCRETE, stored_epoch=se, stored_coordinator_epoch=sc, marker_epoch=me,
                                marker_coordinator_epoch=mc) == err
    out = append_end_txn_marker(se, sc, TxnMarker(0, 5, me, R.COMMIT, mc))
    assert out == ((err, me, mc) if err == E.NONE else (err, se, sc))


def test_failover_loads_without_last_epoch_and_resends_markers_with_new_coordinator_epoch():
    rec = to_log_record(prepared(S.PREPARE_ABORT))
    meta, markers = load_transaction(rec, 7)
    assert (meta.last_epoch, meta.prev_producer_id, meta.pending_state, meta.has_failed_epoch_fence) == (
        -1, -1, NO_PENDING, False)
    assert {(m.partition, m.result, m.coordinator_epoch) for m in markers} == {(0, R.ABORT, 7), (3, R.ABORT, 7)}
    assert load_transaction(to_log_record(prepared()._replace(state=int(S.COMPLETE_COMMIT), partitions=())), 7)[1] == ()


def test_previous_producer_id_persisted_only_when_switched_on():
    assert to_log_record(prepared(), persist_previous_producer_id=True).prev_producer_id == 5
    assert to_log_record(prepared()).prev_producer_id == -1
