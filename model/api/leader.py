"""A partition leader, one function per request or event: a produce batch (``UnifiedLog.append`` ->
``analyzeAndValidateProducerState`` -> ``ProducerAppendInfo``), a transaction marker, the periodic
producer-id expiry, the start of a KIP-890 verification.

The rules are the machines': ``partition.validation.validate_produce`` (duplicate, unknown
producer, epoch and sequence checks; a batch of several records is the sequence range
``base_sequence .. last_sequence``), ``validate_data_batch`` (epoch for every origin, the
transactional mix), ``append_marker``, ``producer_state`` (the cache of the last 5 batches, expiry).
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import Errors
from ..partition.producer_state import (
    add_batch,
    begin_transaction,
    empty_entry,
    find_entry,
    put_entry,
    truncate_head,
)
from ..partition.producer_state import remove_expired_producers as _remove_expired
from ..partition.replica import marker_timestamp
from ..partition.validation import AppendOrigin, validate_data_batch, validate_produce
from ..partition.validation import append_marker as _append_marker
from ..partition.verification import (
    Verifications,
    clear_verification,
    find_verification,
    remove_expired_verifications,
    verification_refuses,
)
from ..partition.verification import start_verification as _start_verification
from ..state import ProducerStateEntry
from ..transactions.markers import TxnMarker
from .protocol import Protocol

APPENDED, REJECTED, DUPLICATE = "APPENDED", "REJECTED", "DUPLICATE"


class LeaderState(NamedTuple):
    producers: tuple[ProducerStateEntry, ...]
    log_end_offset: int
    now: int = 0
    verifications: Verifications = ()


class ProduceBatch(NamedTuple):
    producer_id: int
    epoch: int
    base_sequence: int
    last_sequence: int
    origin: int = AppendOrigin.CLIENT
    transactional: bool = False
    #: the offset the batch is written at (-1: the leader assigns the log end offset)
    first_offset: int = -1
    #: the batch's max timestamp (-1: now)
    timestamp: int = -1


class ProduceResult(NamedTuple):
    result: str  # APPENDED / REJECTED / DUPLICATE
    error: int
    first_offset: int = -1
    last_offset: int = -1


def _count(batch: ProduceBatch, max_seq: int) -> int:
    return (batch.last_sequence - batch.base_sequence) % (max_seq + 1) + 1


def append_batch(state: LeaderState, batch: ProduceBatch, protocol: Protocol, *,
                 check_duplicates: bool = True) -> tuple[ProduceResult, LeaderState]:
    """A produce batch through ``UnifiedLog`` (``check_duplicates=False``: through
    ``ProducerAppendInfo`` alone, as ProducerStateManagerTest drives it: no duplicate pre-check and
    no clearing of the verification entry, which ``UnifiedLog.updateProducers`` does)."""
    entry = find_entry(state.producers, batch.producer_id)
    if batch.origin == AppendOrigin.CLIENT:
        if verification_refuses(find_verification(state.verifications, batch.producer_id), batch.base_sequence):
            return ProduceResult(REJECTED, int(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)), state
        d = validate_produce(entry, epoch=batch.epoch, seq=batch.base_sequence, last_seq=batch.last_sequence,
                             max_seq=protocol.max_seq, unknown_producer=protocol.broker_unknown_producer,
                             old_duplicate_error=protocol.broker_duplicate_sequence_error,
                             check_duplicates=check_duplicates)
        if d.duplicate_offset >= 0:
            cached = next(b for b in entry.batches if b.offset == d.duplicate_offset)  # type: ignore[union-attr]
            return ProduceResult(DUPLICATE, int(Errors.NONE), cached.offset - cached.delta, cached.offset), state
        if d.error != Errors.NONE:
            return ProduceResult(REJECTED, int(d.error)), state
    err = validate_data_batch(entry or empty_entry(batch.producer_id), epoch=batch.epoch,
                              transactional=batch.transactional, origin=AppendOrigin(batch.origin))
    if err != Errors.NONE:
        return ProduceResult(REJECTED, err), state
    first = batch.first_offset if batch.first_offset >= 0 else state.log_end_offset
    last = first + _count(batch, protocol.max_seq) - 1
    ts = batch.timestamp if batch.timestamp >= 0 else state.now
    new = add_batch(entry, batch.producer_id, batch.epoch, batch.last_sequence, last, ts, protocol.broker_batch_cache)
    delta = last - first
    if delta:
        new = new._replace(batches=new.batches[:-1] + (new.batches[-1]._replace(delta=delta),))
    verifications = state.verifications
    if batch.transactional:
        new = begin_transaction(new, first)
        if check_duplicates:
            verifications = clear_verification(verifications, batch.producer_id)
    return ProduceResult(APPENDED, int(Errors.NONE), first, last), state._replace(
        producers=put_entry(state.producers, new), log_end_offset=max(state.log_end_offset, last + 1),
        verifications=verifications)


class MarkerRequest(NamedTuple):
    producer_id: int
    epoch: int
    result: int  # TxnResult
    coordinator_epoch: int
    #: the offset the control batch is written at (-1: the log end offset)
    offset: int = -1


def append_marker(state: LeaderState, marker: MarkerRequest, protocol: Protocol, *,
                  origin: int = AppendOrigin.COORDINATOR, unified_log: bool = True) -> tuple[ProduceResult, LeaderState]:
    """WriteTxnMarkers on this partition (origin COORDINATOR; REPLICATION skips the checks); through
    ``UnifiedLog`` (``unified_log``) the marker also clears the producer's verification entry."""
    entry = find_entry(state.producers, marker.producer_id) or empty_entry(marker.producer_id)
    offset = marker.offset if marker.offset >= 0 else state.log_end_offset
    mk = TxnMarker(0, marker.producer_id, marker.epoch, marker.result, marker.coordinator_epoch)
    if origin == AppendOrigin.REPLICATION:
        # a follower applies the marker without the epoch and coordinator-epoch checks
        d = _append_marker(entry._replace(epoch=min(entry.epoch, marker.epoch)), mk, timestamp=state.now,
                           check_coordinator_epoch=False)
    else:
        d = _append_marker(entry, mk, timestamp=state.now)
    if d.error != Errors.NONE:
        return ProduceResult(REJECTED, int(d.error)), state
    if not protocol.marker_sets_producer_timestamp:
        # before KAFKA-9144 (2.4.1 / 2.5.0) a marker left lastTimestamp at the last cached data batch's
        d = d._replace(entry=marker_timestamp(find_entry(state.producers, marker.producer_id), d.entry, False))
    verifications = clear_verification(state.verifications, marker.producer_id) if unified_log else state.verifications
    return ProduceResult(APPENDED, int(Errors.NONE), offset, offset), state._replace(
        producers=put_entry(state.producers, d.entry), log_end_offset=max(state.log_end_offset, offset + 1),
        verifications=verifications)


def remove_expired_producers(state: LeaderState, expiration_ms: int) -> LeaderState:
    """``ProducerStateManager.removeExpiredProducers``: producers idle ``expiration_ms`` with no open
    transaction, and verification entries as old."""
    return state._replace(producers=_remove_expired(state.producers, state.now, expiration_ms),
                          verifications=remove_expired_verifications(state.verifications, state.now, expiration_ms))


def move_log_start_offset(state: LeaderState, log_start_offset: int, protocol: Protocol) -> LeaderState:
    """Retention or DeleteRecords moves the log start offset: since KAFKA-7190 (2.4.0) the producer
    state stays (``onLogStartOffsetIncremented``); before, producers whose last batch is below the
    new log start offset are evicted (``truncateHead``)."""
    if protocol.broker_retain_producer_state:
        return state
    return state._replace(producers=truncate_head(state.producers, log_start_offset))


def start_verification(state: LeaderState, producer_id: int, seq: int, epoch: int) -> LeaderState:
    """``UnifiedLog.maybeStartTransactionVerification``: nothing to verify (the SENTINEL guard) while
    the producer has a transaction ongoing on this partition; otherwise the entry is created or updated."""
    entry = find_entry(state.producers, producer_id)
    if entry is not None and entry.current_txn_first_offset >= 0:
        return state
    return state._replace(verifications=_start_verification(state.verifications, producer_id, seq, epoch, state.now))
