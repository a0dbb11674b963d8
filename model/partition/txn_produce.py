"""The partition leader's transactional path with sequence numbers (``UnifiedLog.appendAsLeader`` for
a transactional producer): KIP-890 part-1 verification, the idempotent checks (duplicate in the
5-batch cache, epoch, sequence), the transactional checks of ``appendDataBatch``, the append that
opens the producer's transaction on the partition, the COMMIT/ABORT marker append, and the last
stable offset as the producer state table sees it.

The leader's log holds ``transactions.log.LogEntry`` values (data and markers), so the log-reading
rules of ``transactions.log`` (open transactions, LSO, read_committed) apply to it unchanged.
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import Errors
from ..state import ProducerStateEntry, TxnPartitionState
from ..transactions.codes import TxnResult
from ..transactions.log import EntryKind, LogEntry
from ..transactions.markers import TxnMarker
from .producer_state import (
    add_batch,
    begin_transaction,
    empty_entry,
    find_entry,
    maybe_update_epoch,
    put_entry,
)
from .replica import marker_timestamp
from .validation import (
    AppendOrigin,
    append_marker,
    validate_data_batch,
    validate_produce,
)


def needs_verification(partition: TxnPartitionState, producer_id: int) -> bool:
    """KIP-890 part 1: a transactional batch is verified with the coordinator unless the producer
    already has a transaction open on the partition (``VerificationGuard``)."""
    entry = find_entry(partition.producers, producer_id)
    return entry is None or entry.current_txn_first_offset < 0


class TxnProduceOutcome(NamedTuple):
    error: int
    #: the batch's offset (a duplicate's original offset), -1 when refused
    offset: int
    partition: TxnPartitionState


def handle_txn_produce(partition: TxnPartitionState, *, producer_id: int, epoch: int, seq: int, value: int,
                       timestamp: int, max_seq: int, cache_size: int, unknown_producer: str,
                       old_duplicate_error: bool, verification_error: int = Errors.NONE) -> TxnProduceOutcome:
    """One transactional batch from a client. ``verification_error`` is the coordinator's answer to
    the leader's verification (NONE when it was not asked); verification runs before the append
    and makes verify-then-append atomic (the VerificationGuard), so it is checked first."""
    if verification_error != Errors.NONE:
        return TxnProduceOutcome(int(verification_error), -1, partition)
    entry = find_entry(partition.producers, producer_id)
    decision = validate_produce(entry, epoch=epoch, seq=seq, max_seq=max_seq, unknown_producer=unknown_producer,
                                old_duplicate_error=old_duplicate_error)
    if decision.error != Errors.NONE or not decision.append:
        return TxnProduceOutcome(int(decision.error), decision.duplicate_offset, partition)
    error = validate_data_batch(entry if entry is not None else empty_entry(producer_id), epoch=epoch,
                                transactional=True, origin=AppendOrigin.CLIENT)
    if error != Errors.NONE:
        return TxnProduceOutcome(error, -1, partition)
    offset = len(partition.log)
    updated = begin_transaction(add_batch(entry, producer_id, epoch, seq, offset, timestamp, cache_size), offset)
    log = partition.log + (LogEntry(producer_id, epoch, int(EntryKind.TXN_DATA), value),)
    return TxnProduceOutcome(int(Errors.NONE), offset,
                             partition._replace(log=log, producers=put_entry(partition.producers, updated)))


def append_coordinator_batch(partition: TxnPartitionState, *, producer_id: int, epoch: int, value: int,
                             verification_error: int = Errors.NONE) -> TxnProduceOutcome:
    """A transactional batch the group coordinator writes for a producer (TxnOffsetCommit, origin
    COORDINATOR: no sequence checks): the epoch check of ``appendDataBatch``, then the append that
    opens the producer's transaction on the partition."""
    if verification_error != Errors.NONE:
        return TxnProduceOutcome(int(verification_error), -1, partition)
    entry = find_entry(partition.producers, producer_id) or empty_entry(producer_id)
    error = validate_data_batch(entry, epoch=epoch, transactional=True, origin=AppendOrigin.COORDINATOR)
    if error != Errors.NONE:
        return TxnProduceOutcome(error, -1, partition)
    offset = len(partition.log)
    updated = begin_transaction(maybe_update_epoch(entry, epoch), offset)
    log = partition.log + (LogEntry(producer_id, epoch, int(EntryKind.TXN_DATA), value),)
    return TxnProduceOutcome(int(Errors.NONE), offset,
                             partition._replace(log=log, producers=put_entry(partition.producers, updated)))


def tv2_marker_refused(entry: ProducerStateEntry, marker: TxnMarker, check: str) -> bool:
    """The transaction-version-2 epoch check of a marker (``Protocol.tv2_marker_epoch_check``): ``strict``
    (KAFKA-19446) refuses a marker not above the stored epoch, as the previous transaction's; ``strict-retry``
    (KAFKA-19999) lets one at the stored epoch through when the producer has no open transaction (the
    coordinator's retry of a marker already written); ``lenient`` leaves the check to ``append_marker``."""
    if check == "lenient" or entry.epoch < 0 or marker.producer_epoch > entry.epoch:
        return False
    retry = marker.producer_epoch == entry.epoch and entry.current_txn_first_offset < 0
    return not (check == "strict-retry" and retry)


def write_marker(partition: TxnPartitionState, marker: TxnMarker, *, timestamp: int,
                 check_coordinator_epoch: bool, sets_timestamp: bool = True,
                 tv2_epoch_check: str = "lenient") -> tuple[int, TxnPartitionState]:
    """WriteTxnMarkers on the leader: ``append_marker``'s checks on the producer's entry (a fresh one
    if the producer has no state, as ``appendEndTxnMarker`` creates it), then the control batch.
    ``sets_timestamp=False`` is the entry's lastTimestamp before KAFKA-9144 (``replica.marker_timestamp``);
    ``tv2_epoch_check`` the transaction-version-2 epoch check (``tv2_marker_refused``)."""
    found = find_entry(partition.producers, marker.producer_id)
    entry: ProducerStateEntry = found or empty_entry(marker.producer_id)
    if tv2_marker_refused(entry, marker, tv2_epoch_check):
        return int(Errors.INVALID_PRODUCER_EPOCH), partition
    decision = append_marker(entry, marker, timestamp=timestamp, check_coordinator_epoch=check_coordinator_epoch)
    if decision.error != Errors.NONE:
        return decision.error, partition
    decision = decision._replace(entry=marker_timestamp(found, decision.entry, sets_timestamp))
    kind = EntryKind.COMMIT if marker.result == TxnResult.COMMIT else EntryKind.ABORT
    control = LogEntry(marker.producer_id, marker.producer_epoch, int(kind), marker.coordinator_epoch)
    log = partition.log + (control,)
    return int(Errors.NONE), partition._replace(log=log, producers=put_entry(partition.producers, decision.entry))


def producer_state_lso(partition: TxnPartitionState) -> int:
    """The last stable offset as the leader computes it: the first offset of the earliest transaction
    its producer state table holds open (``ongoingTxns``), or the log end."""
    firsts = [e.current_txn_first_offset for e in partition.producers if e.current_txn_first_offset >= 0]
    return min(firsts, default=len(partition.log))
