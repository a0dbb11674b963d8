"""LSO and read_committed visibility over a partition's log of batches and markers."""

from eoscheck.model.transactions.log import (
    EntryKind,
    LogEntry,
    committed_values,
    has_open_transaction,
    last_stable_offset,
    open_transactions,
    outcome_of,
    read_committed,
    read_uncommitted,
)

K = EntryKind


def txn(pid, value, epoch=0):
    return LogEntry(pid, epoch, int(K.TXN_DATA), value)


def marker(pid, kind, epoch=0):
    return LogEntry(pid, epoch, int(kind), 0)


def test_empty_log():
    assert last_stable_offset(()) == 0 and read_committed(()) == ()


def test_open_transaction_holds_the_lso_at_its_first_offset():
    log = (LogEntry(1, 0, int(K.DATA), 10), txn(2, 20), txn(3, 30), txn(2, 21))
    assert open_transactions(log) == ((2, 1), (3, 2))
    assert last_stable_offset(log) == 1
    assert [e.value for _, e in read_committed(log)] == [10]
    assert [e.value for _, e in read_uncommitted(log)] == [10, 20, 30, 21]


def test_commit_and_abort_markers_close_and_decide():
    log = (txn(2, 20), txn(3, 30), marker(2, K.COMMIT), txn(3, 31), marker(3, K.ABORT))
    assert open_transactions(log) == () and last_stable_offset(log) == len(log)
    assert [e.value for _, e in read_committed(log)] == [20]
    assert outcome_of(log, 1) == K.ABORT and outcome_of(log, 0) == K.COMMIT
    assert committed_values(log) == (20,)


def test_committed_data_behind_an_open_transaction_is_not_yet_visible():
    log = (txn(3, 30), txn(2, 20), marker(2, K.COMMIT))
    assert last_stable_offset(log) == 0 and read_committed(log) == ()
    assert has_open_transaction(log, 3) and not has_open_transaction(log, 2)


def test_a_batch_after_the_marker_opens_a_new_transaction_hanging_the_lso():
    # a zombie's late write after its transaction was aborted: nothing tracks it on the coordinator
    log = (txn(2, 20), marker(2, K.ABORT), txn(2, 21))
    assert open_transactions(log) == ((2, 2),)
    assert last_stable_offset(log) == 2 and outcome_of(log, 2) == K.TXN_DATA
