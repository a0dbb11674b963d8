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
    #: answered with a retriable error and queued again (``ProducerBatch.inRetry``)
    retried: bool = False


class PartitionEntry(NamedTuple):
    producer_id: int
    epoch: int
    next_sequence: int = 0
    last_acked_sequence: int = -1
    last_acked_offset: int = -1
    in_flight: tuple[InFlightBatch, ...] = ()
    #: ``partitionsWithUnresolvedSequences``: the sequence after a batch that expired in retry (its
    #: append is unknown), -1 when resolved
    unresolved: int = -1


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
                          in_flight=tuple(moved), unresolved=-1)


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
#: (``maybeTransitionToErrorState``: ProducerFencedException, UnsupportedVersionException and the cluster and
#: transactional-id authorization exceptions, 2.5.0 to 4.2.0-rc1; no machine answers an authorization error)
FATAL_PRODUCE_ERRORS = frozenset({Errors.PRODUCER_FENCED, Errors.UNSUPPORTED_VERSION, Errors.CLUSTER_AUTHORIZATION_FAILED,
                                  Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED})


def adjust_sequences_after_failure(entry: PartitionEntry, failed: InFlightBatch) -> PartitionEntry:
    """``adjustSequencesDueToFailedBatch`` (transactional): the failed batch leaves a hole, so the
    later in-flight batches and the next sequence move down by its record count."""
    moved = tuple(b._replace(base_sequence=b.base_sequence - failed.records, sequence_reset=True)
                  if b.base_sequence >= failed.base_sequence else b for b in entry.in_flight)
    return entry._replace(next_sequence=entry.next_sequence - failed.records, in_flight=moved)


def on_produce_error(entry: PartitionEntry, name: str, error: int, log_start_offset: int, *, transactional: bool,
                     unresolved: bool = False, max_seq: int = 2**31 - 1, can_retry: bool = True,
                     adjust_sequences: bool = True, producer_fatal: bool = False,
                     pid_mapping_fatal: bool = False) -> ErrorReaction:
    """``Sender.completeBatch`` for a refused batch: ``TransactionManager.canRetry`` (``can_retry``:
    the Sender's own conditions - delivery timeout, retries left), else ``handleFailedBatch``
    (``adjust_sequences``: false for a batch that expired or ran out of retries, whose sequence may
    have been written). ``unresolved``: the partition's sequence is unresolved (also read from the
    entry). ``producer_fatal``: the producer is already in a fatal error (nothing but the removal).
    ``pid_mapping_fatal``: the 4.0+ client, whose ``maybeTransitionToErrorState`` makes InvalidPidMappingException
    fatal (KAFKA-14563, PR 17698, 4.0.0; before, a transactional producer's abortable error)."""
    batch = next(b for b in entry.in_flight if b.name == name)
    unresolved = unresolved or entry.unresolved >= 0

    def retry(e: PartitionEntry = entry, bump: bool = False) -> ErrorReaction:
        # reenqueueBatch: the batch is now in retry (a later expiry leaves its sequence unresolved)
        again = tuple(b._replace(retried=True) if b.name == name else b for b in e.in_flight)
        return ErrorReaction(True, bump, False, False, e._replace(in_flight=again))

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
                # a gap for sure only without an unresolved sequence, or right after it
                return retry(bump=not unresolved or batch.base_sequence == entry.unresolved)
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
    fatal = error in FATAL_PRODUCE_ERRORS or (pid_mapping_fatal and error == Errors.INVALID_PRODUCER_ID_MAPPING)
    if fatal or producer_fatal:
        # a producer in a fatal error only drops the batch
        return ErrorReaction(False, False, False, False, rest, True)
    if error == Errors.UNKNOWN_PRODUCER_ID:
        # resetSequenceForPartition: the partition's entry is dropped
        return ErrorReaction(False, False, transactional, True, PartitionEntry(entry.producer_id, entry.epoch))
    if not transactional:
        # an OutOfOrderSequenceException bumps the epoch whether or not sequences may be adjusted
        return ErrorReaction(False, adjust_sequences or error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, False, False, rest)
    if not adjust_sequences:
        return ErrorReaction(False, False, True, False, rest)
    return ErrorReaction(False, False, True, False, adjust_sequences_after_failure(rest, batch))


def mark_sequence_unresolved(entry: PartitionEntry, name: str, max_seq: int) -> PartitionEntry:
    """``markSequenceUnresolved``: the sequence after the batch (the largest such) is unresolved."""
    batch = next(b for b in entry.in_flight if b.name == name)
    return mark_unresolved_after(entry, last_sequence(batch, max_seq), max_seq)


def mark_unresolved_after(entry: PartitionEntry, last_seq: int, max_seq: int) -> PartitionEntry:
    """``markSequenceUnresolved`` reads only the batch's last sequence, so a batch no longer in flight
    (acknowledged already) marks the partition too; ``maybeResolveSequences`` then finds it resolved
    if the next sequence follows the last acknowledged one."""
    after = _inc(last_seq, 1, max_seq)
    return entry._replace(unresolved=after if entry.unresolved < 0 else max(entry.unresolved, after))


def expire_batch(entry: PartitionEntry, name: str, *, transactional: bool, max_seq: int) -> ErrorReaction:
    """The Sender expires a batch past delivery.timeout.ms: it fails with a TimeoutException without
    adjusting sequences, and a batch that was in retry leaves the partition's sequence unresolved
    (``Sender.sendProducerData``)."""
    batch = next(b for b in entry.in_flight if b.name == name)
    marked = mark_sequence_unresolved(entry, name, max_seq) if batch.retried else entry
    return on_produce_error(marked, name, int(Errors.REQUEST_TIMED_OUT), -1, transactional=transactional,
                            max_seq=max_seq, can_retry=False, adjust_sequences=False)


RESOLVED, PENDING, BUMP, ABORTABLE_BUMP, FATAL = "resolved", "pending", "bump", "abortable-bump", "fatal"


def maybe_resolve_sequences(entry: PartitionEntry, *, transactional: bool, can_bump_epoch: bool,
                            max_seq: int) -> tuple[PartitionEntry, str]:
    """``maybeResolveSequences`` for one partition: once nothing is in flight, an unresolved sequence
    is resolved if the next sequence follows the last acknowledged one; otherwise the idempotent
    producer bumps its epoch for the partition, the transactional one gets an abortable error with an
    epoch bump (or a fatal one when the coordinator cannot bump)."""
    if entry.unresolved < 0:
        return entry, RESOLVED
    if entry.in_flight:
        return entry, PENDING
    done = entry._replace(unresolved=-1)
    expected = _inc(entry.last_acked_sequence, 1, max_seq) if entry.last_acked_sequence >= 0 else 0
    if expected == entry.next_sequence:
        return done, RESOLVED
    if not transactional:
        return done, BUMP
    return done, ABORTABLE_BUMP if can_bump_epoch else FATAL


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


#: the exception a produce error completes its batch with, where its name is not the error's own in CamelCase
_PRODUCE_EXCEPTIONS = {Errors.OUT_OF_ORDER_SEQUENCE_NUMBER: "OutOfOrderSequenceException",
                       Errors.DUPLICATE_SEQUENCE_NUMBER: "DuplicateSequenceException",
                       Errors.INVALID_PRODUCER_ID_MAPPING: "InvalidPidMappingException",
                       Errors.REQUEST_TIMED_OUT: "TimeoutException",
                       # a disconnect's (Sender.handleProduceResponse)
                       Errors.NETWORK_EXCEPTION: "NetworkException",
                       # Errors.java's exception for MESSAGE_TOO_LARGE (a batch that cannot be split further)
                       Errors.MESSAGE_TOO_LARGE: "RecordTooLargeException",
                       # Sender.failBatch's own exceptions for the authorization errors (2.0.0 to 4.2.0-rc1)
                       Errors.TOPIC_AUTHORIZATION_FAILED: "TopicAuthorizationException",
                       Errors.CLUSTER_AUTHORIZATION_FAILED: "ClusterAuthorizationException",
                       Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "TransactionalIdAuthorizationException"}


def failed_batch_error(error: int, *, transactional: bool, wrap_in_abortable: bool) -> str:
    """The exception ``handleFailedBatch`` hands ``maybeTransitionToErrorState``, which becomes the transactional
    producer's lastError. ``wrap_in_abortable``: KAFKA-19176 (PR 19522, 4.1.0; KAFKA-19177 for
    InvalidTxnStateException): a transactional producer's batch failed for good with a retriable error or
    INVALID_TXN_STATE leaves a TransactionAbortableException (its cause the error), so the application aborts
    rather than retries the send and writes duplicates."""
    if transactional and wrap_in_abortable and (error in RETRIABLE or error == Errors.INVALID_TXN_STATE):
        return "TransactionAbortableException"
    named = _PRODUCE_EXCEPTIONS.get(Errors(error))
    return named or "".join(w.capitalize() for w in Errors(error).name.split("_")) + "Exception"
