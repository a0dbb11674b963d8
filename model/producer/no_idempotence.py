"""The producer without idempotence (``enable.idempotence=false``, no transactional id: the Sender and the accumulator
have no TransactionManager), read at apache/kafka 2.0.0, 2.1.0, 2.4.1, 2.5.0, 3.0.0, 1eb7644 and 4.2.0-rc1.

Its batches carry no producer id, epoch or sequence: ``RecordAccumulator.drain`` calls ``setProducerState`` only when a
TransactionManager exists, so a produce request of this producer holds no idempotent records. The broker's
ProducerStateManager tracks only batches with a producer id, so nothing on the partition detects a retried batch that
the leader had appended already (a duplicate), and with more than one request in flight a retried batch may land after
a later one (a reordering). This is why exactly-once needs idempotence; the model's machines never run such a producer.

``Sender.canRetry`` retries a failed batch only while it has attempts left and the error is a RetriableException (from
2.5.0, KAFKA-8805 937f1f741c0, ``transactionManager == null ? retriable : transactionManager.canRetry``; 2.0 .. 2.4
asked the TransactionManager only when there was one: the same for this producer). KIP-91 (KAFKA-5886 7fc7136ffd2, first tag 2.1.0) added
``delivery.timeout.ms``: a batch past it, or already done (expired while its request was in flight:
``getExpiredInflightBatches`` fails it with a TimeoutException), is never retried, so a late retriable answer to an
expired batch is dropped. Any other failure completes the batch with the error's exception (``Sender.failBatch``; a
TOPIC_AUTHORIZATION_FAILED one with a TopicAuthorizationException naming the topic).

No machine reads this module; the conformance interface does, for SenderTest.
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, RETRIABLE

#: RecordBatch.NO_SEQUENCE
NO_SEQUENCE = -1


class BatchIds(NamedTuple):
    producer_id: int
    epoch: int
    base_sequence: int


def drained_batch_ids() -> BatchIds:
    """What a drained batch of a producer without a TransactionManager carries: nothing the broker could deduplicate
    on."""
    return BatchIds(NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_SEQUENCE)


def is_idempotent(ids: BatchIds) -> bool:
    """``RecordBatch.hasProducerId``: what RequestTestUtils.hasIdempotentRecords reads of a produce request."""
    return ids.producer_id != NO_PRODUCER_ID


def can_retry(error: int, *, attempts_left: bool, done: bool, delivery_timed_out: bool, kip_91: bool) -> bool:
    """``Sender.canRetry`` without a TransactionManager."""
    if kip_91 and (done or delivery_timed_out):
        return False
    return attempts_left and error in RETRIABLE
