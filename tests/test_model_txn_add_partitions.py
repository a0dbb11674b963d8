"""§6.1: AddPartitionsToTxn / AddOffsetsToTxn, each check in Kafka's order and each accepted transition."""

import pytest
from eoscheck.model.transactions.add_partitions import add_partitions_to_txn
from eoscheck.model.transactions.codes import NO_PENDING, Errors, TxnState
from eoscheck.model.transactions.metadata import TxnMeta
from eoscheck.model.transactions.states import is_valid_transition

S, E = TxnState, Errors
PID, EPOCH = 4, 2


def meta(state, parts=(), pending=NO_PENDING):
    return TxnMeta(True, PID, PID, EPOCH, -1, int(state), False, int(pending), parts)


def test_unknown_transactional_id():
    assert add_partitions_to_txn(None, PID, EPOCH, (0,)).error == E.INVALID_PRODUCER_ID_MAPPING


def test_producer_id_checked_before_epoch():
    out = add_partitions_to_txn(meta(S.ONGOING, (0,)), PID + 1, EPOCH + 1, (1,))
    assert (out.error, out.wrote) == (E.INVALID_PRODUCER_ID_MAPPING, False)


@pytest.mark.parametrize("epoch", [EPOCH - 1, EPOCH + 1])
def test_other_epoch_is_producer_fenced_before_pending(epoch):
    assert add_partitions_to_txn(meta(S.ONGOING, pending=S.PREPARE_COMMIT), PID, epoch, (1,)).error == E.PRODUCER_FENCED


def test_pending_transition_is_concurrent_transactions():
    assert add_partitions_to_txn(meta(S.ONGOING, pending=S.ONGOING), PID, EPOCH, (1,)).error == E.CONCURRENT_TRANSACTIONS


@pytest.mark.parametrize("state", [S.PREPARE_COMMIT, S.PREPARE_ABORT])
def test_prepare_states_are_concurrent_transactions(state):
    out = add_partitions_to_txn(meta(state, (0,)), PID, EPOCH, (0,))
    assert (out.error, out.meta.state, out.wrote) == (E.CONCURRENT_TRANSACTIONS, state, False)


def test_ongoing_with_every_partition_already_added_writes_nothing():
    m = meta(S.ONGOING, (0, 2))
    out = add_partitions_to_txn(m, PID, EPOCH, (2,))
    assert (out.error, out.meta, out.wrote) == (E.NONE, m, False)


@pytest.mark.parametrize("state", [S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT, S.ONGOING])
def test_accepted_moves_to_ongoing_with_the_union(state):
    start = (0,) if state == S.ONGOING else ()
    out = add_partitions_to_txn(meta(state, start), PID, EPOCH, (3, 1))
    assert (out.error, out.meta.state, out.wrote) == (E.NONE, S.ONGOING, True)
    assert out.meta.partitions == tuple(sorted(set(start) | {1, 3}))
    assert is_valid_transition(state, out.meta.state)


def test_metadata_that_does_not_exist_is_invalid_producer_id_mapping():
    assert add_partitions_to_txn(meta(S.EMPTY)._replace(exists=False), PID, EPOCH, (0,)).error == \
        E.INVALID_PRODUCER_ID_MAPPING


def test_a_transition_records_the_producer_id_it_starts_from_as_previous():
    rotated = meta(S.EMPTY)._replace(prev_producer_id=PID - 1)  # after a producer-id rotation
    assert add_partitions_to_txn(rotated, PID, EPOCH, (0,)).meta.prev_producer_id == PID
