"""§5.1 visibility: pending transactional offsets, completed on COMMIT by log order, dropped on ABORT."""

import pytest
from eoscheck.model.group.metadata import NO_COMMIT, CommittedOffset, PendingTxnOffset, new_group
from eoscheck.model.group.pending_offsets import (
    complete_pending_txn_offset_commit,
    fail_pending_txn_offset_commit,
    has_pending_txn_offsets,
    on_txn_offset_commit_append,
    prepare_txn_offset_commit,
)

A, B = 10, 11  # producer ids


def store(g, pid, part, off, log_offset):
    g = prepare_txn_offset_commit(g, pid, ((part, off),))
    return on_txn_offset_commit_append(g, pid, part, off, log_offset)


def test_prepare_then_append_records_log_offset():
    g = prepare_txn_offset_commit(new_group(2), A, ((1, 5),))
    assert g.pending == (PendingTxnOffset(A, 1, 5, -1),) and has_pending_txn_offsets(g, 1)
    assert not has_pending_txn_offsets(g, 0)
    g = on_txn_offset_commit_append(g, A, 1, 5, 3)
    assert g.pending == (PendingTxnOffset(A, 1, 5, 3),)
    assert g.offsets == (NO_COMMIT, NO_COMMIT)  # still invisible


def test_commit_materialises_and_abort_drops():
    g = store(new_group(1), A, 0, 5, 3)
    assert complete_pending_txn_offset_commit(g, A, True).offsets == (CommittedOffset(5, 3),)
    dropped = complete_pending_txn_offset_commit(g, A, False)
    assert dropped.offsets == (NO_COMMIT,) and dropped.pending == ()


def test_log_order_wins_over_completion_order():
    # B's offsets written after A's, but A's transaction commits last: B's offset stays
    g = store(store(new_group(1), A, 0, 5, 3), B, 0, 8, 6)
    g = complete_pending_txn_offset_commit(g, B, True)
    assert g.offsets == (CommittedOffset(8, 6),)
    g = complete_pending_txn_offset_commit(g, A, True)
    assert g.offsets == (CommittedOffset(8, 6),) and g.pending == ()


def test_later_written_commit_replaces_earlier():
    g = complete_pending_txn_offset_commit(store(new_group(1), A, 0, 5, 3), A, True)
    g = complete_pending_txn_offset_commit(store(g, B, 0, 9, 7), B, True)
    assert g.offsets == (CommittedOffset(9, 7),)


def test_completion_touches_only_the_producers_offsets():
    g = store(store(new_group(2), A, 0, 5, 3), B, 1, 8, 4)
    g = complete_pending_txn_offset_commit(g, A, False)
    assert g.pending == (PendingTxnOffset(B, 1, 8, 4),) and has_pending_txn_offsets(g, 1)


def test_marker_for_producer_without_pending_offsets_is_a_no_op():
    g = store(new_group(1), A, 0, 5, 3)
    assert complete_pending_txn_offset_commit(g, B, True) == g


def test_same_producer_same_partition_replaces_pending_entry():
    g = store(new_group(1), A, 0, 5, 3)
    g = store(g, A, 0, 6, 4)
    assert g.pending == (PendingTxnOffset(A, 0, 6, 4),)


def test_failed_write_removes_pending_entry():
    g = prepare_txn_offset_commit(new_group(1), A, ((0, 5),))
    assert fail_pending_txn_offset_commit(g, A, 0).pending == ()


def test_commit_before_append_is_illegal_state():
    g = prepare_txn_offset_commit(new_group(1), A, ((0, 5),))
    with pytest.raises(ValueError):
        complete_pending_txn_offset_commit(g, A, True)
