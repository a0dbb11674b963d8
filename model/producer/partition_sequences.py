"""The producer client's per-partition sequence state (``TxnPartitionEntry``) for batches of
several records, and its reaction to a produce error (``TransactionManager.canRetry`` /
``handleFailedBatch``), for both the idempotent and the transactional producer (KIP-360 client).

A batch takes ``next_sequence`` when first drained and moves it by its record count (wrapping
past ``max_seq``). An answer acknowledges the batch's last sequence and last offset. On an error:

* UNKNOWN_PRODUCER_ID: retry when the answer has no log start offset or the batch was already
  re-sequenced; when the last acknowledged offset is below the log start offset (the state was lost
  to retention) the transactional producer restarts the partition's in-flight sequences at 0
  under the *same* producer id and epoch and retries, the idempotent one bumps its epoch; otherwise
  the idempotent producer bumps its epoch and the transactional batch fails (abortable error;
  the partition's sequence state is dropped at once: ``resetSequenceForPartition``).
* OUT_OF_ORDER_SEQUENCE_NUMBER: retry when an earlier batch failed (this one is not the next
  expected, or was re-sequenced); else the idempotent producer bumps its epoch and retries, the
  transactional batch fails (abortable).
* any other failure (or a retriable one past the delivery timeout): the idempotent producer bumps
  its epoch for the partition; the transactional one becomes abortable and moves the later
  in-flight sequences down by the failed batch's records (``adjustSequencesDueToFailedBatch``).
* a transactional abortable error asks for an epoch bump (InitProducerId after the abort) only if
  the coordinator supports it (InitProducerId v >= 3); an old coordinator leaves the epoch.

The idempotent bump (``bumpIdempotentEpochAndResetIdIfNeeded``) re-sequences the partition's
in-flight batches from 0 under the new epoch (``startSequencesAtBeginning``, as shipped).
"""

from __future__ import annotations

from typing import NamedTuple

from eoscheck.checker.ops import CONCRETE

from ..errors import RETRIABLE, Errors
from ..partition.sequence import increment_sequence


class InFlightBatch(NamedTuple):
    name: str
    base_sequence: int
    records: int
    producer_id: int
    epoch: int
    sequence_reset: bool = False


class PartitionEntry(NamedTuple):
    producer_id: int
    epoch: int
    next_sequence: int = 0
    last_acked_sequence: int = -1
    last_acked_offset: int = -1
    in_flight: tuple[InFlightBatch, ...] = ()


def _inc(seq: int, inc: int, max_seq: int) -> int:
    return int(increment_sequence(CONCRETE, max_seq=max_seq, seq=seq, inc=inc))


def last_sequence(batch: InFlightBatch, max_seq: int) -> int:
    return _inc(batch.base_sequence, batch.records - 1, max_seq)


def assign(entry: PartitionEntry, name: str, count: int, max_seq: int) -> tuple[PartitionEntry, InFlightBatch]:
    """Drain a new batch of ``count`` records: it takes the next sequence."""
    batch = InFlightBatch(name, entry.next_sequence, count, entry.producer_id, entry.epoch)
    return entry._replace(next_sequence=_inc(entry.next_sequence, count, max_seq),
                          in_flight=entry.in_flight + (batch,)), batch


def acknowledge(entry: PartitionEntry, name: str, base_offset: int, max_seq: int) -> PartitionEntry:
    batch = next(b for b in entry.in_flight if b.name == name)
    last = last_sequence(batch, max_seq)
    return entry._replace(last_acked_sequence=max(entry.last_acked_sequence, last),
                          last_acked_offset=max(entry.last_acked_offset, base_offset + batch.records - 1),
                          in_flight=tuple(b for b in entry.in_flight if b.name != name))


def restart_sequences(entry: PartitionEntry, max_seq: int, producer_id: int | None = None,
                      epoch: int | None = None) -> PartitionEntry:
    """``startSequencesAtBeginning``: in-flight batches re-sequenced from 0 (marked reset) under the
    given (default: the entry's) producer id and epoch; the last acknowledged sequence is forgotten."""
    pid = entry.producer_id if producer_id is None else producer_id
    ep = entry.epoch if epoch is None else epoch
    seq, moved = 0, []
    for b in entry.in_flight:
        moved.append(b._replace(base_sequence=seq, producer_id=pid, epoch=ep, sequence_reset=True))
        seq = _inc(seq, b.records, max_seq)
    return entry._replace(producer_id=pid, epoch=ep, next_sequence=seq, last_acked_sequence=-1,
                          in_flight=tuple(moved))


class ErrorReaction(NamedTuple):
    retry: bool
    #: the idempotent producer bumps its epoch (locally) for this partition
    bump_epoch: bool
    #: the transactional producer enters ABORTABLE_ERROR
    abortable: bool
    #: the partition's sequence state was dropped (it starts again at 0)
    reset_partition: bool
    entry: PartitionEntry
    #: the producer enters FATAL_ERROR (ProducerFencedException and the like)
    fatal: bool = False
    #: the batch completed as a success without an offset (DUPLICATE_SEQUENCE_NUMBER)
    completed: bool = False


#: produce errors that are fatal for the producer, idempotent or transactional
#: (``maybeTransitionToErrorState``: ProducerFencedException and UnsupportedVersionException; the
#: authorization exceptions there are outside the model)
FATAL_PRODUCE_ERRORS = frozenset({Errors.PRODUCER_FENCED, Errors.UNSUPPORTED_VERSION})


def adjust_sequences_after_failure(entry: PartitionEntry, failed: InFlightBatch) -> PartitionEntry:
    """``adjustSequencesDueToFailedBatch`` (transactional): the failed batch leaves a hole, so the
    later in-flight batches and the next sequence move down by its record count."""
    moved = tuple(b._replace(base_sequence=b.base_sequence - failed.records, sequence_reset=True)
                  if b.base_sequence >= failed.base_sequence else b for b in entry.in_flight)
    return entry._replace(next_sequence=entry.next_sequence - failed.records, in_flight=moved)


def on_produce_error(entry: PartitionEntry, name: str, error: int, log_start_offset: int, *, transactional: bool,
                     unresolved: bool = False, max_seq: int = 2**31 - 1, can_retry: bool = True) -> ErrorReaction:
    """``Sender.completeBatch`` for a refused batch: ``TransactionManager.canRetry`` (``can_retry``:
    the Sender's own conditions - delivery timeout, retries left), else ``handleFailedBatch``."""
    batch = next(b for b in entry.in_flight if b.name == name)

    def retry(e: PartitionEntry = entry, bump: bool = False) -> ErrorReaction:
        return ErrorReaction(True, bump, False, False, e)

    if can_retry:
        if error == Errors.UNKNOWN_PRODUCER_ID:
            if log_start_offset < 0 or batch.sequence_reset:
                return retry()
            if entry.last_acked_offset < log_start_offset:
                return retry(restart_sequences(entry, max_seq)) if transactional else retry(bump=True)
            if not transactional:
                return retry(bump=True)
        elif error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER:
            expected_next = _inc(entry.last_acked_sequence, 1, max_seq) if entry.last_acked_sequence >= 0 else 0
            if not unresolved and (batch.sequence_reset or batch.base_sequence != expected_next):
                return retry()
            if not transactional:
                return retry(bump=True)
        elif error in RETRIABLE:
            return retry()
    rest = entry._replace(in_flight=tuple(b for b in entry.in_flight if b.name != name))
    if error == Errors.DUPLICATE_SEQUENCE_NUMBER:
        # Sender.completeBatch: the broker no longer caches the batch's offsets, but a later sequence
        # was written, so this one was too: a success with no offset (handleCompletedBatch never
        # lowers the acknowledged sequence and ignores the invalid offset)
        return ErrorReaction(False, False, False, False,
                             rest._replace(last_acked_sequence=max(entry.last_acked_sequence, last_sequence(batch, max_seq))),
                             completed=True)
    # handleFailedBatch
    fatal = error in FATAL_PRODUCE_ERRORS
    if fatal:
        return ErrorReaction(False, False, False, False, rest, True)
    if error == Errors.UNKNOWN_PRODUCER_ID:
        # resetSequenceForPartition: the partition's entry is dropped
        return ErrorReaction(False, False, transactional, True, PartitionEntry(entry.producer_id, entry.epoch))
    if not transactional:
        return ErrorReaction(False, True, False, False, rest)
    return ErrorReaction(False, False, True, False, adjust_sequences_after_failure(rest, batch))


def maybe_update_producer_id_and_epoch(entry: PartitionEntry, producer_id: int, epoch: int,
                                       max_seq: int) -> PartitionEntry:
    """``TransactionManager.maybeUpdateProducerIdAndEpoch`` (before the partition's next drain): a
    partition still on an older producer id or epoch (the bump was asked for by another partition)
    starts again at sequence 0 under the producer's pair once its last in-flight batch completed."""
    if (entry.producer_id, entry.epoch) == (producer_id, epoch) or entry.in_flight:
        return entry
    return restart_sequences(entry, max_seq, producer_id, epoch)


def bump_idempotent_epoch(entry: PartitionEntry, max_seq: int) -> PartitionEntry:
    """The idempotent producer's local bump for a partition that asked for it: epoch + 1 and the
    in-flight batches re-sequenced from 0 (``startSequencesAtBeginning``)."""
    return restart_sequences(entry, max_seq, epoch=entry.epoch + 1)
