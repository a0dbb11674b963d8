"""The producer's answer to the late success of a batch it had failed already (expired past delivery.timeout.ms).

``Sender.completeBatch`` sends an answer of NONE, and a DUPLICATE_SEQUENCE_NUMBER it cannot retry (``canRetry`` is
false for a done batch), to its two-argument overload, which calls ``TransactionManager.handleCompletedBatch`` before
``ProducerBatch.complete`` (``done`` before 3.0.0) and whatever that returns. Unlike the late failure
(``late_failure.py``, KAFKA-14884), nothing ever made this call depend on the batch completing: read at 2.5.0, 2.7.0,
2.8.0, 3.0.0, 3.3.0, 3.5.0, 3.6.0, 3.8.0, 4.0.0 and 4.2.0-rc1. The batch's future stays failed with the expiry's
TimeoutException (``done`` / ``complete`` find the final state FAILED and only log), and nothing undoes the expiry's
reaction: the transactional producer's abortable error and its epoch bump asked for, the idempotent one's unresolved
sequence. ``handleCompletedBatch``, in order:

1. ``maybeUpdateLastAckedSequence``: the batch's last sequence (as drained; the expiry never moved it) becomes the
   partition's last acknowledged one when greater (a plain ``>``, no wrap-around);
2. ``updateLastAckedOffset``: nothing when the answer has no offset (``INVALID_OFFSET``, -1, as a
   DUPLICATE_SEQUENCE_NUMBER answer carries), else base offset + records - 1 when greater;
3. ``removeInFlightBatch``: the expiry took the batch out already; before KAFKA-13794 (3.0.2, 3.1.1, 3.2.0) the
   removal by base sequence takes a newer batch that restarted at it (``batch_split.remove_in_flight_batch``);
4. before KAFKA-12152 (eb026fcf82d, 2.8.0): a batch of another producer id or epoch that leaves the partition with
   nothing in flight starts the partition's sequences at 0 under the producer's pair (``startSequencesAtBeginning``,
   forgetting the last acknowledged sequence). From 2.8.0 ``maybeUpdateProducerIdAndEpoch`` does it at the next drain.

Not modelled: a partition with no entry (the transactional producer's InitProducerId ran ``resetSequenceNumbers``, and
no ``getOrCreate`` since made it again; the harness does not keep which calls would have). Before 3.7.0
``maybeUpdateLastAckedSequence`` throws IllegalStateException there (``getPartition`` / ``txnPartitionMap.get``); from
fa36a7f2d66 (MINOR, PR 14591, "Push down logic from TransactionManager to TxnPartitionEntry", first tag 3.7.0) it returns
-1 and only ``updateLastAckedOffset`` throws, for a transactional producer answered with an offset. Either exception
leaves the response handler (``NetworkClient.completeResponses`` logs it) before ``completeBatch`` unmutes the partition.

A later ``maybeResolveSequences`` reads the new last acknowledged sequence: a late success that makes it the one before
the next sequence resolves the partition without the epoch bump (or abortable error) it would otherwise cause.
"""

from __future__ import annotations

from .batch_split import remove_in_flight_batch
from .partition_sequences import InFlightBatch, PartitionEntry, last_sequence

#: ``ProduceResponse.INVALID_OFFSET``
INVALID_OFFSET = -1


def handle_late_completed_batch(entry: PartitionEntry, batch: InFlightBatch, base_offset: int, *, max_seq: int,
                                producer: tuple[int, int], by_identity: bool, reset_drained_stale: bool) -> PartitionEntry:
    """``handleCompletedBatch`` for ``batch``, failed before, answered with ``base_offset`` on ``entry``, its partition's,
    while the producer has the pair ``producer``. ``by_identity``: KAFKA-13794; ``reset_drained_stale``: before
    KAFKA-12152."""
    last = last_sequence(batch, max_seq)
    if last > entry.last_acked_sequence:
        entry = entry._replace(last_acked_sequence=last)
    if base_offset != INVALID_OFFSET and base_offset + batch.records - 1 > entry.last_acked_offset:
        entry = entry._replace(last_acked_offset=base_offset + batch.records - 1)
    entry = remove_in_flight_batch(entry, batch, by_identity=by_identity)
    if reset_drained_stale and (batch.producer_id, batch.epoch) != producer and not entry.in_flight:
        # nothing in flight to re-sequence; partitionsWithUnresolvedSequences is not the entry's and stays
        entry = entry._replace(producer_id=producer[0], epoch=producer[1], next_sequence=0, last_acked_sequence=-1)
    return entry
