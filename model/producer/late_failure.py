"""A transactional producer's answer to the late failure of a batch it had completed already (expired past
delivery.timeout.ms), before KAFKA-14884.

Until 3.5.x ``Sender.failBatch`` called ``TransactionManager.handleFailedBatch`` before ``completeExceptionally``,
so a batch failed twice (its expiry, then the produce answer still on the wire, or a disconnect's and then the
late answer) was handled twice. KAFKA-14884 (ea0bb001262, "take 2", first tag 3.6.0; not 3.5.2) moved the call into
``if (batch.completeExceptionally(...))``: from 3.6.0 the second failure is ignored. (The try/catch around it is
KAFKA-14831's, a81f35c1c8f, also 3.6.0; the earlier ones let the exception out of the response handler, where
``NetworkClient.completeResponses`` logs it.) Read at 2.5.0, 2.6.0, 2.7.0, 2.8.0, 3.0.0, 3.1.1, 3.3.0, 3.5.2 and
3.6.0 (``Sender.completeBatch`` / ``failBatch``; ``TransactionManager.handleFailedBatch``,
``maybeTransitionToErrorState``, ``transitionToAbortableError``, ``transitionTo``,
``adjustSequencesDueToFailedBatch``). For a non-fatal error, in order:

1. ``maybeTransitionToErrorState``: an epoch bump is asked for when the coordinator can bump and the producer is not
   completing (COMMITTING_TRANSACTION / ABORTING_TRANSACTION), then ``transitionToAbortableError``: nothing during an
   abort; ABORTABLE_ERROR from IN_TRANSACTION, COMMITTING_TRANSACTION or ABORTABLE_ERROR, the late error becoming
   lastError; from any other state (READY, INITIALIZING, FATAL_ERROR: the answer came after the abort ended) the
   transition is invalid and throws (KafkaException, IllegalStateException from KAFKA-13412), leaving the epoch bump
   asked for and nothing else done;
2. ``removeInFlightBatch`` (by base sequence before KAFKA-13794, ``batch_split.remove_in_flight_batch``);
3. before KAFKA-12152 (2.8.0): a batch of another producer id or epoch stops here;
4. with retries left (``attempts < retries``: the late answer does not count as exhausting them),
   ``adjustSequencesDueToFailedBatch``: the next sequence moves down by the batch's records (below 0: an
   IllegalStateException, nothing moved), then every in-flight batch from the failed one's base sequence (the first
   that would go below 0 throws before any moved, the next sequence already lowered). The batch's sequences were
   never given back at its expiry, so a second failure moves the partition's sequences a second time.
"""

from __future__ import annotations

from typing import NamedTuple

from .batch_split import remove_in_flight_batch
from .partition_sequences import InFlightBatch, PartitionEntry

#: the states ``transitionTo(ABORTABLE_ERROR)`` accepts (``State.isTransitionValid``, 2.5.0 .. 3.5.2)
ABORTABLE_FROM = frozenset({"IN_TRANSACTION", "COMMITTING_TRANSACTION", "ABORTABLE_ERROR"})


class LateFailure(NamedTuple):
    #: the producer's state after the answer
    state: str
    #: ``epochBumpRequired`` was set (it stays set until the next completeTransaction)
    bump_required: bool
    #: the lastError the abortable transition set, None when it did not run
    last_error: str | None
    entry: PartitionEntry
    #: the exception thrown out of ``handleFailedBatch``, None when it returned
    exception: str | None = None


def adjust_after_late_failure(entry: PartitionEntry, batch: InFlightBatch) -> tuple[PartitionEntry, str | None]:
    """``adjustSequencesDueToFailedBatch`` with its two checks (which the first failure of a batch never trips)."""
    lowered = entry.next_sequence - batch.records
    if lowered < 0:
        return entry, "IllegalStateException"
    entry = entry._replace(next_sequence=lowered)
    later = [b for b in entry.in_flight if b.base_sequence >= batch.base_sequence]
    if any(b.base_sequence - batch.records < 0 for b in later):
        return entry, "IllegalStateException"
    moved = tuple(b._replace(base_sequence=b.base_sequence - batch.records, sequence_reset=True)
                  if b.base_sequence >= batch.base_sequence else b for b in entry.in_flight)
    return entry._replace(in_flight=moved), None


def handle_late_failed_batch(state: str, entry: PartitionEntry, batch: InFlightBatch, exception: str, *,
                             producer: tuple[int, int], can_bump_epoch: bool, adjust: bool, by_identity: bool,
                             stale_ignored: bool, invalid_transition: str) -> LateFailure:
    """``handleFailedBatch`` of a non-fatal ``exception`` (the failed batch's, already named) for ``batch``, completed
    before, on ``entry``, its partition's, while the producer is in ``state`` with the pair ``producer``.
    ``adjust``: retries were left; ``by_identity``: KAFKA-13794; ``stale_ignored``: before KAFKA-12152;
    ``invalid_transition``: what an invalid transition throws (KafkaException before KAFKA-13412)."""
    bump = can_bump_epoch and state not in ("COMMITTING_TRANSACTION", "ABORTING_TRANSACTION")
    last_error: str | None = None
    if state != "ABORTING_TRANSACTION":
        if state not in ABORTABLE_FROM:
            return LateFailure(state, bump, None, entry, invalid_transition)
        state, last_error = "ABORTABLE_ERROR", exception
    entry = remove_in_flight_batch(entry, batch, by_identity=by_identity)
    if (stale_ignored and (batch.producer_id, batch.epoch) != producer) or not adjust:
        return LateFailure(state, bump, last_error, entry)
    entry, thrown = adjust_after_late_failure(entry, batch)
    return LateFailure(state, bump, last_error, entry, thrown)
