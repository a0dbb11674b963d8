"""§6.2: every row of the TV1 EndTxn table, on concrete metadata and through the ops rule."""

import pytest
from eoscheck.checker.ops import CONCRETE
from eoscheck.model.transactions.codes import NO_PENDING, Errors, TxnResult, TxnState
from eoscheck.model.transactions.end_txn import end_txn, end_txn_decision
from eoscheck.model.transactions.metadata import TxnMeta

S, E, R = TxnState, Errors, TxnResult
PID, EPOCH = 7, 3


def meta(state, pending=NO_PENDING, epoch=EPOCH, parts=(0, 1)):
    return TxnMeta(True, PID, PID, epoch, 2, int(state), False, int(pending), parts if state == S.ONGOING else ())


# (state, result) -> (error, next state) from the reference table
TABLE = [
    (S.ONGOING, R.COMMIT, E.NONE, S.PREPARE_COMMIT),
    (S.ONGOING, R.ABORT, E.NONE, S.PREPARE_ABORT),
    (S.COMPLETE_COMMIT, R.COMMIT, E.NONE, S.COMPLETE_COMMIT),
    (S.COMPLETE_COMMIT, R.ABORT, E.INVALID_TXN_STATE, S.COMPLETE_COMMIT),
    (S.COMPLETE_ABORT, R.ABORT, E.NONE, S.COMPLETE_ABORT),
    (S.COMPLETE_ABORT, R.COMMIT, E.INVALID_TXN_STATE, S.COMPLETE_ABORT),
    (S.PREPARE_COMMIT, R.COMMIT, E.CONCURRENT_TRANSACTIONS, S.PREPARE_COMMIT),
    (S.PREPARE_COMMIT, R.ABORT, E.INVALID_TXN_STATE, S.PREPARE_COMMIT),
    (S.PREPARE_ABORT, R.ABORT, E.CONCURRENT_TRANSACTIONS, S.PREPARE_ABORT),
    (S.PREPARE_ABORT, R.COMMIT, E.INVALID_TXN_STATE, S.PREPARE_ABORT),
    (S.EMPTY, R.COMMIT, E.INVALID_TXN_STATE, S.EMPTY),
    (S.EMPTY, R.ABORT, E.INVALID_TXN_STATE, S.EMPTY),
]


@pytest.mark.parametrize("state,result,error,next_state", TABLE)
def test_state_table(state, result, error, next_state):
    out = end_txn(meta(state), PID, EPOCH, result)
    assert (out.error, out.meta.state) == (error, next_state)
    # only the Ongoing rows write a PrepareX record; retries answer NONE without a write
    assert out.wrote == (state == S.ONGOING)
    if out.wrote:
        assert out.meta.partitions == (0, 1) and out.meta.epoch == EPOCH


def test_unknown_transactional_id_is_invalid_producer_id_mapping():
    assert end_txn(None, PID, EPOCH, R.COMMIT).error == E.INVALID_PRODUCER_ID_MAPPING


@pytest.mark.parametrize("state", list(S))
def test_other_producer_id_is_invalid_producer_id_mapping_before_anything_else(state):
    assert end_txn(meta(state), PID + 1, EPOCH - 1, R.COMMIT).error == E.INVALID_PRODUCER_ID_MAPPING


@pytest.mark.parametrize("epoch", [EPOCH - 1, EPOCH + 1])
def test_client_with_another_epoch_is_fenced_even_when_pending(epoch):
    out = end_txn(meta(S.ONGOING, pending=S.PREPARE_COMMIT), PID, epoch, R.COMMIT)
    assert (out.error, out.wrote) == (E.PRODUCER_FENCED, False)


def test_internal_abort_accepts_a_higher_epoch_but_not_a_lower_one():
    assert end_txn(meta(S.ONGOING), PID, EPOCH + 1, R.ABORT, is_from_client=False).error == E.NONE
    assert end_txn(meta(S.ONGOING), PID, EPOCH - 1, R.ABORT, is_from_client=False).error == E.PRODUCER_FENCED


@pytest.mark.parametrize("pending", [S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT, S.COMPLETE_COMMIT, S.EMPTY])
def test_pending_transition_is_concurrent_transactions(pending):
    assert end_txn(meta(S.ONGOING, pending=pending), PID, EPOCH, R.COMMIT).error == E.CONCURRENT_TRANSACTIONS


def test_pending_epoch_fence_installs_the_fenced_epoch_before_prepare_abort():
    out = end_txn(meta(S.ONGOING, pending=S.PREPARE_EPOCH_FENCE), PID, EPOCH + 1, R.ABORT, is_from_client=False)
    assert out.error == E.NONE and out.wrote
    assert (out.meta.state, out.meta.epoch, out.meta.last_epoch, out.meta.pending_state) == (
        S.PREPARE_ABORT, EPOCH + 1, -1, NO_PENDING)


def test_tv2_prepare_bumps_the_epoch_and_records_the_last_one():
    out = end_txn(meta(S.ONGOING), PID, EPOCH, R.COMMIT, tv2_bump=True)
    assert (out.meta.epoch, out.meta.last_epoch) == (EPOCH + 1, EPOCH)


def test_ops_rule_next_state_matches_table():
    for state, result, error, next_state in TABLE:
        d = end_txn_decision(CONCRETE, is_from_client=True, meta_exists=True, meta_producer_id=PID, meta_epoch=EPOCH,
                             meta_state=int(state), meta_pending=NO_PENDING, req_producer_id=PID, req_epoch=EPOCH,
                             req_result=int(result))
        assert (d.error, d.next_state) == (error, next_state)
    d = end_txn_decision(CONCRETE, is_from_client=True, meta_exists=False, meta_producer_id=PID, meta_epoch=EPOCH,
                         meta_state=int(S.ONGOING), meta_pending=NO_PENDING, req_producer_id=PID, req_epoch=EPOCH,
                         req_result=int(R.COMMIT))
    assert d == (E.INVALID_PRODUCER_ID_MAPPING, S.ONGOING)


# --- TV2 (KIP-890 part 2), the later-trunk table ------------------------------------------------------
from eoscheck.model.transactions.end_txn import end_txn_tv2
from eoscheck.model.transactions.states import is_valid_transition

RETRY, CURRENT, OLD = EPOCH - 1, EPOCH, EPOCH - 2
TV2 = [
    # state, result, request epoch, error, next state, bumped
    (S.ONGOING, R.COMMIT, CURRENT, E.NONE, S.PREPARE_COMMIT, True),
    (S.ONGOING, R.ABORT, CURRENT, E.NONE, S.PREPARE_ABORT, True),
    (S.ONGOING, R.COMMIT, RETRY, E.PRODUCER_FENCED, S.ONGOING, False),
    (S.PREPARE_COMMIT, R.COMMIT, RETRY, E.CONCURRENT_TRANSACTIONS, S.PREPARE_COMMIT, False),
    (S.PREPARE_COMMIT, R.ABORT, RETRY, E.INVALID_TXN_STATE, S.PREPARE_COMMIT, False),
    (S.PREPARE_ABORT, R.ABORT, CURRENT, E.PRODUCER_FENCED, S.PREPARE_ABORT, False),
    (S.COMPLETE_COMMIT, R.COMMIT, RETRY, E.NONE, S.COMPLETE_COMMIT, False),
    (S.COMPLETE_COMMIT, R.COMMIT, CURRENT, E.INVALID_TXN_STATE, S.COMPLETE_COMMIT, False),
    (S.COMPLETE_COMMIT, R.ABORT, RETRY, E.INVALID_TXN_STATE, S.COMPLETE_COMMIT, False),
    (S.COMPLETE_COMMIT, R.ABORT, CURRENT, E.NONE, S.PREPARE_ABORT, True),
    (S.COMPLETE_ABORT, R.ABORT, RETRY, E.NONE, S.COMPLETE_ABORT, False),
    (S.COMPLETE_ABORT, R.ABORT, CURRENT, E.NONE, S.PREPARE_ABORT, True),
    (S.COMPLETE_ABORT, R.COMMIT, RETRY, E.INVALID_TXN_STATE, S.COMPLETE_ABORT, False),
    (S.COMPLETE_ABORT, R.COMMIT, CURRENT, E.INVALID_TXN_STATE, S.COMPLETE_ABORT, False),
    (S.EMPTY, R.ABORT, CURRENT, E.NONE, S.PREPARE_ABORT, True),
    (S.EMPTY, R.ABORT, RETRY, E.PRODUCER_FENCED, S.EMPTY, False),
    (S.EMPTY, R.COMMIT, CURRENT, E.INVALID_TXN_STATE, S.EMPTY, False),
    (S.COMPLETE_COMMIT, R.COMMIT, OLD, E.PRODUCER_FENCED, S.COMPLETE_COMMIT, False),
]


@pytest.mark.parametrize("state,result,epoch,error,next_state,bumped", TV2)
def test_tv2_table(state, result, epoch, error, next_state, bumped):
    out = end_txn_tv2(meta(state), PID, epoch, result)
    assert (out.error, out.meta.state, out.wrote) == (error, next_state, bumped)
    if bumped:
        assert (out.meta.epoch, out.meta.last_epoch) == (EPOCH + 1, EPOCH)
        assert is_valid_transition(state, next_state, tv2=True)
    else:
        assert out.meta.epoch == EPOCH


def test_tv2_pid_mismatch_and_pending():
    assert end_txn_tv2(meta(S.ONGOING), PID + 1, EPOCH, R.COMMIT).error == E.INVALID_PRODUCER_ID_MAPPING
    assert end_txn_tv2(meta(S.ONGOING, pending=S.PREPARE_COMMIT), PID, EPOCH, R.COMMIT).error == \
        E.CONCURRENT_TRANSACTIONS
