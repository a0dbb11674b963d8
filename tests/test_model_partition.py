"""The partition leader's rules (kafka-semantics.md §2.3, §2.4, §3.1, §3.2)."""

from __future__ import annotations

import pytest
from eoscheck.model.errors import Errors
from eoscheck.model.partition.log import (
    advance_log_start_offset,
    append_batch,
    expire_producers,
    rebuild_producer_state,
)
from eoscheck.model.partition.producer_state import add_batch, find_entry, truncate_head
from eoscheck.model.partition.validation import validate_produce
from eoscheck.model.state import CachedBatch, LogRecord, PartitionState, ProducerStateEntry

MAX_SEQ = 2**31 - 1


def entry(epoch: int = 0, seqs: tuple[int, ...] = (0, 1, 2), ts: int = 0) -> ProducerStateEntry:
    return ProducerStateEntry(7, epoch, tuple(CachedBatch(s, 10 + s) for s in seqs), ts)


def check(e: ProducerStateEntry | None, epoch: int, seq: int, mode: str = "accept", old_dup: bool = False):
    return validate_produce(e, epoch=epoch, seq=seq, max_seq=MAX_SEQ, unknown_producer=mode,
                            old_duplicate_error=old_dup)


def test_next_sequence_same_epoch_is_appended() -> None:
    d = check(entry(), 0, 3)
    assert (d.error, d.append) == (Errors.NONE, True)


def test_duplicate_of_cached_batch_returns_original_offset_and_writes_nothing() -> None:
    d = check(entry(), 0, 1)
    assert (d.error, d.duplicate_offset, d.append) == (Errors.NONE, 11, False)


def test_gap_or_stale_sequence_is_out_of_order() -> None:
    assert check(entry(), 0, 5).error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    # a duplicate older than the 5 cached batches is not recognised (2.0+)
    assert check(entry(seqs=(4, 5, 6, 7, 8)), 0, 2).error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_old_duplicate_is_duplicate_sequence_number_in_1_0() -> None:
    assert check(entry(seqs=(4, 5, 6, 7, 8)), 0, 2, old_dup=True).error == Errors.DUPLICATE_SEQUENCE_NUMBER
    # a gap ahead is still out of order
    assert check(entry(seqs=(4, 5)), 0, 9, old_dup=True).error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_older_epoch_is_invalid_producer_epoch() -> None:
    assert check(entry(epoch=2), 1, 3).error == Errors.INVALID_PRODUCER_EPOCH


def test_newer_epoch_must_start_at_zero() -> None:
    assert check(entry(epoch=2), 3, 0).append
    assert check(entry(epoch=2), 3, 4).error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


@pytest.mark.parametrize("mode,error", [("out_of_order", Errors.OUT_OF_ORDER_SEQUENCE_NUMBER),
                                        ("unknown_producer_id", Errors.UNKNOWN_PRODUCER_ID),
                                        ("accept", Errors.NONE)])
def test_unknown_producer_per_broker_version(mode: str, error: Errors) -> None:
    assert check(None, 0, 4, mode).error == error
    assert check(None, 0, 0, mode).append  # sequence 0 from an unknown producer: accepted everywhere


def test_wrap_after_max_sequence() -> None:
    e = ProducerStateEntry(7, 0, (CachedBatch(MAX_SEQ, 3),), 0)
    assert check(e, 0, 0).append


def test_cache_keeps_last_five_and_new_epoch_clears_it() -> None:
    e = None
    for s in range(7):
        e = add_batch(e, 7, 0, s, s, s, 5)
    assert [b.seq for b in e.batches] == [2, 3, 4, 5, 6] and e.last_timestamp == 6
    e = add_batch(e, 7, 1, 0, 7, 9, 5)
    assert (e.epoch, [b.seq for b in e.batches]) == (1, [0])
    assert [b.seq for b in add_batch(None, 7, 0, 0, 0, 0, 1).batches] == [0]  # 0.11: one cached batch


def _partition(n: int) -> PartitionState:
    part = PartitionState((), 0, ())
    for s in range(n):
        part, _ = append_batch(part, LogRecord(0, s, 7, 0, s, s), 5)
    return part


def test_append_assigns_offsets_and_records_state() -> None:
    part = _partition(3)
    assert len(part.log) == 3
    e = find_entry(part.producers, 7)
    assert e is not None and [(b.seq, b.offset) for b in e.batches] == [(0, 0), (1, 1), (2, 2)]


def test_delete_records_before_kafka_7190_evicts_producers_below_the_log_start_offset() -> None:
    part = _partition(2)
    assert advance_log_start_offset(part, 2, retain_producer_state=False).producers == ()
    kept = advance_log_start_offset(part, 1, retain_producer_state=False)
    # a retained producer keeps its whole cache (1.0-2.3 never trimmed it: audit A1)
    assert [(b.seq, b.offset) for b in kept.producers[0].batches] == [(0, 0), (1, 1)]
    assert truncate_head(part.producers, 5) == ()


def test_delete_records_since_kafka_7190_keeps_producer_state() -> None:
    part = _partition(2)
    moved = advance_log_start_offset(part, 2, retain_producer_state=True)
    assert moved.log_start_offset == 2 and moved.producers == part.producers


def test_rebuilt_state_knows_only_producers_with_batches_at_or_above_the_log_start_offset() -> None:
    part = _partition(3)
    assert rebuild_producer_state(part.log, 0, 5) == part.producers
    rebuilt = rebuild_producer_state(part.log, 2, 5)
    assert [(b.seq, b.offset) for b in rebuilt[0].batches] == [(2, 2)] and rebuilt[0].last_timestamp == 2
    assert rebuild_producer_state(part.log, 3, 5) == ()


def test_producer_id_expiry_after_expiration_since_last_timestamp() -> None:
    part = _partition(2)  # last timestamp 1
    assert expire_producers(part, now=2, expiration=2).producers == part.producers
    assert expire_producers(part, now=3, expiration=2).producers == ()


# --- the transactional path (§2.1, §2.3) --------------------------------------------------------------

def test_transactional_batch_opens_and_marker_closes_the_transaction() -> None:
    from eoscheck.model.partition.producer_state import add_batch, begin_transaction, empty_entry
    from eoscheck.model.partition.validation import AppendOrigin, append_marker, validate_data_batch
    from eoscheck.model.transactions.markers import TxnMarker

    e = empty_entry(7)
    assert (e.epoch, e.coordinator_epoch, e.current_txn_first_offset) == (-1, -1, -1)
    assert validate_data_batch(e, epoch=2, transactional=True, origin=AppendOrigin.CLIENT) == Errors.NONE
    e = begin_transaction(add_batch(e, 7, 2, 0, 4, 1, 5), 4)
    assert e.current_txn_first_offset == 4
    e = begin_transaction(add_batch(e, 7, 2, 1, 6, 1, 5), 6)
    assert e.current_txn_first_offset == 4  # later batches leave the first offset
    # a non-transactional batch while the transaction is open
    assert validate_data_batch(e, epoch=2, transactional=False, origin=AppendOrigin.CLIENT) == Errors.INVALID_TXN_STATE
    # a lower epoch is fenced, except on replication
    assert validate_data_batch(e, epoch=1, transactional=True, origin=AppendOrigin.COORDINATOR) == \
        Errors.INVALID_PRODUCER_EPOCH
    assert validate_data_batch(e, epoch=1, transactional=True, origin=AppendOrigin.REPLICATION) == Errors.NONE
    # a COMMIT marker with a higher epoch closes the transaction, bumps the epoch and clears the cache
    done = append_marker(e, TxnMarker(0, 7, 3, 1, 5), timestamp=9)
    assert done.error == Errors.NONE
    assert (done.entry.epoch, done.entry.coordinator_epoch, done.entry.current_txn_first_offset,
            done.entry.batches, done.entry.last_timestamp) == (3, 5, -1, (), 9)
    assert validate_data_batch(done.entry, epoch=3, transactional=False, origin=AppendOrigin.CLIENT) == Errors.NONE


def test_marker_checks_producer_then_coordinator_epoch() -> None:
    from eoscheck.model.partition.producer_state import empty_entry
    from eoscheck.model.partition.validation import append_marker
    from eoscheck.model.transactions.markers import TxnMarker

    e = empty_entry(7)._replace(epoch=3, coordinator_epoch=2, current_txn_first_offset=0)
    assert append_marker(e, TxnMarker(0, 7, 2, 1, 1), timestamp=0) == (Errors.INVALID_PRODUCER_EPOCH, e)
    assert append_marker(e, TxnMarker(0, 7, 3, 1, 1), timestamp=0) == (Errors.TRANSACTION_COORDINATOR_FENCED, e)
    # the counterfactual leader that ignores the coordinator epoch writes the stale marker
    stale = append_marker(e, TxnMarker(0, 7, 3, 0, 1), timestamp=0, check_coordinator_epoch=False)
    assert stale.error == Errors.NONE and stale.entry.coordinator_epoch == 1


def test_part_1_appends_keep_the_transaction_fields() -> None:
    from eoscheck.model.partition.producer_state import add_batch, empty_entry

    e = empty_entry(7)._replace(epoch=0, coordinator_epoch=4, current_txn_first_offset=2)
    bumped = add_batch(e, 7, 1, 0, 3, 5, 5)
    assert (bumped.coordinator_epoch, bumped.current_txn_first_offset) == (4, 2)
    assert add_batch(None, 7, 0, 0, 0, 1, 5) == ProducerStateEntry(7, 0, (CachedBatch(0, 0),), 1)


def test_producer_with_open_transaction_never_expires() -> None:
    from eoscheck.model.partition.producer_state import is_producer_expired

    idle = entry(ts=0)
    assert is_producer_expired(idle, 10, 5)
    assert not is_producer_expired(idle._replace(current_txn_first_offset=3), 10, 5)
