"""Conformance of the partition leader's produce validation and producer-state table with
kafka-semantics.md §2.1-2.4 (per broker version) and §3.1-3.2 (expiry, log start offset)."""

from __future__ import annotations

import inspect

import pytest
from eoscheck.model.errors import Errors
from eoscheck.model.partition.log import advance_log_start_offset, append_batch, expire_producers
from eoscheck.model.partition.producer_state import add_batch, find_entry, is_producer_expired, truncate_head
from eoscheck.model.partition.validation import validate_produce
from eoscheck.model.state import CachedBatch, LogRecord, PartitionState, ProducerStateEntry

INT_MAX = 2**31 - 1
PID = 7
TRUNK, V1_TO_24, V011 = "accept", "unknown_producer_id", "out_of_order"


def log_record(client: int, record: int, pid: int, epoch: int, seq: int, ts: int = 0) -> LogRecord:
    """A LogRecord whether or not the record carries its CreateTime (the field is being added)."""
    values = dict(client=client, record=record, producer_id=pid, epoch=epoch, seq=seq, timestamp=ts)
    return LogRecord(**{f: values[f] for f in LogRecord._fields})


def append(part: PartitionState, record: LogRecord, ts: int, cache_size: int = 5):
    if "created" in inspect.signature(append_batch).parameters:
        return append_batch(part, record, ts, cache_size)
    return append_batch(part, record._replace(timestamp=ts), cache_size)


def entry(epoch: int, seqs: list[int], first_offset: int = 10, ts: int = 0) -> ProducerStateEntry:
    return ProducerStateEntry(PID, epoch, tuple(CachedBatch(s, first_offset + i) for i, s in enumerate(seqs)), ts)


def produce(e: ProducerStateEntry | None, epoch: int, seq: int, mode: str = TRUNK, max_seq: int = INT_MAX):
    return validate_produce(e, epoch=epoch, seq=seq, max_seq=max_seq, unknown_producer=mode)


# --- §2.2/2.3 trunk (>= 2.5) --------------------------------------------------------------------------

@pytest.mark.parametrize("seq", [0, 1, 17, INT_MAX])
def test_unknown_producer_any_sequence_accepted(seq: int) -> None:
    d = produce(None, 0, seq)
    assert (d.error, d.append) == (Errors.NONE, True)


def test_next_sequence_accepted() -> None:
    d = produce(entry(2, [0, 1, 2]), 2, 3)
    assert (d.error, d.append) == (Errors.NONE, True)


@pytest.mark.parametrize("seq", [4, 9])
def test_gap_is_out_of_order(seq: int) -> None:
    d = produce(entry(2, [0, 1, 2]), 2, seq)
    assert (d.error, d.append) == (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, False)


@pytest.mark.parametrize("idx", range(5))
def test_duplicate_of_any_cached_batch_returns_original_offset_without_append(idx: int) -> None:
    e = entry(2, [3, 4, 5, 6, 7], first_offset=20)
    d = produce(e, 2, 3 + idx)
    assert (d.error, d.append, d.duplicate_offset) == (Errors.NONE, False, 20 + idx)


def test_duplicate_older_than_cache_is_out_of_order() -> None:
    d = produce(entry(2, [3, 4, 5, 6, 7]), 2, 2)
    assert (d.error, d.append) == (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, False)


@pytest.mark.parametrize("seq", [0, 3, 8])
def test_lower_epoch_is_invalid_producer_epoch(seq: int) -> None:
    d = produce(entry(4, [3, 4, 5, 6, 7]), 3, seq)
    assert (d.error, d.append) == (Errors.INVALID_PRODUCER_EPOCH, False)


def test_higher_epoch_with_seq_0_accepted() -> None:
    d = produce(entry(2, [3, 4]), 3, 0)
    assert (d.error, d.append) == (Errors.NONE, True)


def test_higher_epoch_with_seq_not_0_out_of_order() -> None:
    d = produce(entry(2, [3, 4]), 3, 5)
    assert (d.error, d.append) == (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, False)


def test_marker_only_state_same_epoch_needs_seq_0() -> None:
    marker_only = ProducerStateEntry(PID, 2, (), 0)
    assert produce(marker_only, 2, 0).append
    assert produce(marker_only, 2, 3).error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_wraparound_after_int_max() -> None:
    e = entry(1, [INT_MAX - 1, INT_MAX])
    assert produce(e, 1, 0).append
    assert produce(e, 1, 1).error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_small_max_seq_wrap() -> None:
    e = entry(1, [2, 3])
    assert produce(e, 1, 0, max_seq=3).append


# --- §2.4 historical brokers ---------------------------------------------------------------------------

def test_broker_011_unknown_producer_seq_not_0_out_of_order() -> None:
    assert produce(None, 0, 3, V011).error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert produce(None, 0, 0, V011).append


def test_broker_011_only_last_batch_is_a_duplicate() -> None:
    e = entry(1, [5], first_offset=30)  # one cached batch
    d = produce(e, 1, 5, V011)
    assert (d.error, d.append, d.duplicate_offset) == (Errors.NONE, False, 30)
    assert produce(e, 1, 4, V011).error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_broker_1_to_24_unknown_producer_id() -> None:
    d = produce(None, 0, 3, V1_TO_24)
    assert (d.error, d.append) == (Errors.UNKNOWN_PRODUCER_ID, False)
    assert produce(None, 0, 0, V1_TO_24).append


def test_broker_1_0_0_to_1_0_1_duplicate_older_than_cache_is_46() -> None:
    e = entry(2, [3, 4, 5, 6, 7])
    d = validate_produce(e, epoch=2, seq=1, max_seq=INT_MAX, unknown_producer=V1_TO_24, old_duplicate_error=True)
    assert (d.error, d.append) == (Errors.DUPLICATE_SEQUENCE_NUMBER, False)
    # a gap above the cache is still out of order
    d = validate_produce(e, epoch=2, seq=9, max_seq=INT_MAX, unknown_producer=V1_TO_24, old_duplicate_error=True)
    assert d.error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_broker_1_0_0_duplicate_error_never_for_sequence_0() -> None:
    # 1.0.0 isDuplicate: lastSeq != 0 && lastSeq < firstSeq of the cache (audit A3)
    d = validate_produce(entry(2, [3, 4, 5]), epoch=2, seq=0, max_seq=INT_MAX, unknown_producer=V1_TO_24,
                         old_duplicate_error=True)
    assert (d.error, d.append) == (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, False)


def test_broker_2_0_duplicate_older_than_cache_is_out_of_order() -> None:
    assert produce(entry(2, [3, 4, 5, 6, 7]), 2, 1, V1_TO_24).error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


@pytest.mark.parametrize("mode", [TRUNK, V1_TO_24, V011])
def test_old_epoch_is_47_in_every_version(mode: str) -> None:
    assert produce(entry(3, [0]), 2, 1, mode).error == 47


# --- §2.1 producer state entry ------------------------------------------------------------------------

def test_add_batch_keeps_last_5_and_timestamp() -> None:
    e = None
    for i in range(7):
        e = add_batch(e, PID, 0, i, 100 + i, timestamp=50 + i, cache_size=5)
    assert [b.seq for b in e.batches] == [2, 3, 4, 5, 6]
    assert e.last_timestamp == 56


def test_add_batch_with_new_epoch_clears_cache() -> None:
    e = add_batch(entry(1, [0, 1, 2]), PID, 2, 0, 40, timestamp=9, cache_size=5)
    assert (e.epoch, [b.seq for b in e.batches]) == (2, [0])


def test_append_updates_state_only_with_the_log() -> None:
    part = PartitionState((), 0, ())
    part, off = append(part, log_record(0, 0, PID, 0, 0), ts=3)
    assert off == 0 and len(part.log) == 1
    e = find_entry(part.producers, PID)
    assert (e.epoch, e.batches[-1].seq, e.batches[-1].offset, e.last_timestamp) == (0, 0, 0, 3)


# --- §3.1 / §3.2 expiry and the log start offset -----------------------------------------------------

def test_expiry_boundary_inclusive() -> None:
    e = entry(0, [0], ts=10)
    assert not is_producer_expired(e, 19, 10)
    assert is_producer_expired(e, 20, 10)


def test_expired_producer_is_unknown_then_any_sequence_is_accepted() -> None:
    part = PartitionState((log_record(0, 0, PID, 0, 0),), 0, (entry(0, [0], first_offset=0, ts=0),))
    part = expire_producers(part, now=5, expiration=5)
    assert find_entry(part.producers, PID) is None
    assert produce(find_entry(part.producers, PID), 0, 0).append  # the old batch again: a duplicate
    assert produce(find_entry(part.producers, PID), 0, 4).append


def test_trunk_log_start_offset_keeps_producer_state() -> None:
    part = PartitionState(tuple(log_record(0, i, PID, 0, i) for i in range(3)), 0, (entry(0, [0, 1, 2], first_offset=0),))
    moved = advance_log_start_offset(part, 3, retain_producer_state=True)
    assert moved.log_start_offset == 3
    assert find_entry(moved.producers, PID) == find_entry(part.producers, PID)


def test_pre_24_truncate_head_evicts_producers_below_lso() -> None:
    e_old = entry(0, [0, 1], first_offset=0)
    e_new = ProducerStateEntry(PID + 1, 0, (CachedBatch(0, 1), CachedBatch(1, 4)), 0)
    kept = truncate_head((e_old, e_new), 3)
    assert [e.producer_id for e in kept] == [PID + 1]
    # 1.0-2.3 removeBatchesOlderThan discarded dropWhile's result: the cache is never trimmed (audit A1)
    assert [b.offset for b in kept[0].batches] == [1, 4]


def test_pre_25_marker_only_entry_always_evicted() -> None:
    assert truncate_head((ProducerStateEntry(PID, 3, (), 0),), 0) == ()


# --- §3.2 state rebuilt from the log after the snapshots below the log start offset were deleted -------

def test_rebuilt_state_knows_only_producers_with_batches_at_or_above_lso() -> None:
    from eoscheck.model.partition.log import rebuild_producer_state
    other = PID + 1
    log = (log_record(0, 0, PID, 0, 0, ts=1), log_record(0, 1, PID, 0, 1, ts=1), log_record(1, 0, other, 3, 7, ts=2))
    rebuilt = rebuild_producer_state(log, 2, 5)
    assert find_entry(rebuilt, PID) is None
    e = find_entry(rebuilt, other)
    assert (e.epoch, [(b.seq, b.offset) for b in e.batches], e.last_timestamp) == (3, [(7, 2)], 2)
    # the forgotten producer's retry of seq 1 is accepted again (trunk): the duplicate of §7.2
    assert produce(find_entry(rebuilt, PID), 0, 1).append
    # from offset 0 the whole history is replayed and the retry is recognised as a duplicate
    full = rebuild_producer_state(log, 0, 5)
    d = produce(find_entry(full, PID), 0, 1)
    assert (d.append, d.duplicate_offset) == (False, 1)


# --- §2.3 transactional path of the leader, §3.1 expiry exemption -----------------------------------------

def _txn_entry(epoch: int = 2, first_offset: int = -1, coord: int = 1, ts: int = 0):
    from eoscheck.model.state import ProducerStateEntry as E
    return E(PID, epoch, (CachedBatch(0, 10), CachedBatch(1, 11)), ts, coord, first_offset)


def test_open_transaction_never_expires() -> None:
    assert not is_producer_expired(_txn_entry(first_offset=10, ts=0), 1000, 10)
    assert is_producer_expired(_txn_entry(first_offset=-1, ts=0), 1000, 10)


def test_first_transactional_batch_opens_the_transaction() -> None:
    from eoscheck.model.partition.producer_state import begin_transaction
    e = begin_transaction(_txn_entry(), 12)
    assert e.current_txn_first_offset == 12
    assert begin_transaction(e, 13).current_txn_first_offset == 12


@pytest.mark.parametrize("origin_name,error", [("CLIENT", Errors.INVALID_PRODUCER_EPOCH),
                                               ("COORDINATOR", Errors.INVALID_PRODUCER_EPOCH),
                                               ("REPLICATION", Errors.NONE)])
def test_lower_epoch_data_batch_by_origin(origin_name: str, error: Errors) -> None:
    from eoscheck.model.partition.validation import AppendOrigin, validate_data_batch
    assert validate_data_batch(_txn_entry(epoch=3), epoch=2, transactional=True,
                               origin=AppendOrigin[origin_name]) == error


def test_non_transactional_batch_during_open_transaction_is_invalid_txn_state() -> None:
    from eoscheck.model.partition.validation import AppendOrigin, validate_data_batch
    open_txn = _txn_entry(first_offset=10)
    assert validate_data_batch(open_txn, epoch=2, transactional=False, origin=AppendOrigin.CLIENT) == 48
    assert validate_data_batch(open_txn, epoch=2, transactional=True, origin=AppendOrigin.CLIENT) == Errors.NONE
    assert validate_data_batch(_txn_entry(), epoch=2, transactional=False, origin=AppendOrigin.CLIENT) == Errors.NONE


def _marker(epoch: int, coord: int, result: int = 1):
    from eoscheck.model.transactions.markers import TxnMarker
    return TxnMarker(0, PID, epoch, result, coord)


@pytest.mark.parametrize("epoch,coord,error", [(1, 1, Errors.INVALID_PRODUCER_EPOCH),
                                               (2, 0, Errors.TRANSACTION_COORDINATOR_FENCED),
                                               (1, 0, Errors.INVALID_PRODUCER_EPOCH)])
def test_marker_refused(epoch: int, coord: int, error: Errors) -> None:
    from eoscheck.model.partition.validation import append_marker
    e = _txn_entry(epoch=2, first_offset=10, coord=1)
    d = append_marker(e, _marker(epoch, coord), timestamp=5)
    assert (d.error, d.entry) == (error, e)


def test_marker_with_higher_epoch_bumps_clears_cache_and_closes_txn() -> None:
    from eoscheck.model.partition.validation import append_marker
    d = append_marker(_txn_entry(epoch=2, first_offset=10, coord=1), _marker(3, 2), timestamp=7)
    assert d.error == Errors.NONE
    e = d.entry
    assert (e.epoch, e.batches, e.coordinator_epoch, e.current_txn_first_offset, e.last_timestamp) == (3, (), 2, -1, 7)
    # after the marker a same-epoch data batch must start at sequence 0 (marker-only state)
    assert produce(e, 3, 0).append and produce(e, 3, 2).error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_marker_with_same_epoch_keeps_the_sequence_cache() -> None:
    from eoscheck.model.partition.validation import append_marker
    d = append_marker(_txn_entry(epoch=2, first_offset=10, coord=1), _marker(2, 1), timestamp=7)
    assert [b.seq for b in d.entry.batches] == [0, 1] and d.entry.current_txn_first_offset == -1
    assert produce(d.entry, 2, 2).append
