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

from collections.abc import Mapping
from typing import Literal, NamedTuple

from ..errors import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, RETRIABLE, Errors
from .partition_sequences import failed_batch_error

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
    return attempts_left and is_retriable(error)


def is_retriable(error: int) -> bool:
    """``error.exception() instanceof RetriableException`` (``errors.RETRIABLE``; NETWORK_EXCEPTION, which only a
    disconnect gives the client, ``Sender.handleProduceResponse``'s PartitionResponse for each batch, among them)."""
    return error in RETRIABLE


def attempts_left(attempts: int, retries: int) -> bool:
    """``batch.attempts() < this.retries``: a batch counts one attempt per re-enqueue (``ProducerBatch.reenqueued``),
    so ``retries`` failures are retried and the next one fails the batch; a split is no attempt."""
    return attempts < retries


def splits(error: int, records: int, *, done: bool) -> bool:
    """``Sender.completeBatch``'s split: MESSAGE_TOO_LARGE on a batch of several records (magic v2) that is not done
    yet. A batch expired in flight is done, and its late MESSAGE_TOO_LARGE completes nothing (``failBatch`` finds it
    done): the ``!batch.isDone()`` check of KAFKA-7501 (fed27fdd75, first tag 2.2.0, with SenderTest's
    testExpiredBatchDoesNotSplitOnMessageTooLargeError; the same at 1eb7644 and 4.2.0-rc1). Before it (2.1.x, KIP-91
    without the check) the expired batch was split and its records sent again, which no profile reaches: the profile
    holding 2.1.x (``kafka-2.0.1-2.3``) stands for 2.0.1, without KIP-91's expiry."""
    return error == Errors.MESSAGE_TOO_LARGE and records > 1 and not done


#: how the Sender builds the exceptions a failed batch's records get (``Protocol.client_produce_exception``)
ProduceExceptionDetail = Literal["code", "message", "record-errors"]


def top_level_exception(error: int) -> str:
    """``Sender.failBatch``'s top-level exception class: ``error.exception(...)``, or its own for the authorization
    errors (``partition_sequences.failed_batch_error``, whose table also names NETWORK_EXCEPTION's NetworkException
    and MESSAGE_TOO_LARGE's RecordTooLargeException, Errors.java)."""
    return failed_batch_error(error, transactional=False, wrap_in_abortable=False)


def default_message(error: int) -> str:
    """The message of ``error.exception()`` with none given: ``Errors.<NAME>.message()``, named rather than copied."""
    return f"Errors.{Errors(error).name}.message()"


class RecordException(NamedTuple):
    exception: str
    message: str | None


def record_exceptions(error: int, records: int, response_message: str | None,
                      record_errors: Mapping[int, str | None], detail: ProduceExceptionDetail) -> tuple[RecordException, ...]:
    """The exception each record's future of a failed batch gets, by batch index.

    ``code`` (2.0.0 .. 2.6.x): ``error.exception()`` for every record, with the error's default message.
    ``message`` (2.7.0 .. 2.8.x: MINOR PR 9450, af150033b2 on the 2.7 branch, f8e3b84ec0 on trunk, first tag 2.8.0):
    ``error.exception(response.errorMessage)``, the response's message when it has one (KIP-467's error_message,
    KAFKA-8729 f6f24c4700, 2.4.0), for every record.
    ``record-errors`` (KAFKA-12548, 66ba91733c, first tag 3.0.0; the same at 1eb7644 and 4.2.0-rc1): with record
    errors in the response, a record named there gets the record's message, else the response's, else the default;
    its exception is the error's own when the response names one record, else InvalidRecordException; a record not
    named gets a plain KafkaException (no message compared: the text is Kafka's). Without record errors, as
    ``message``. The authorization errors keep Sender's own exceptions (their messages are not compared)."""
    top = top_level_exception(error)
    own = error in (Errors.TOPIC_AUTHORIZATION_FAILED, Errors.CLUSTER_AUTHORIZATION_FAILED)
    if detail == "code" or own:
        top_message = None if own else default_message(error)
    else:
        top_message = response_message if response_message is not None else default_message(error)
    if detail != "record-errors" or not record_errors:
        return tuple(RecordException(top, top_message) for _ in range(records))
    out = []
    for index in range(records):
        if index not in record_errors:
            out.append(RecordException("KafkaException", None))
            continue
        given = record_errors[index]
        message = given if given is not None else (response_message if response_message is not None
                                                   else default_message(error))
        out.append(RecordException(top if len(record_errors) == 1 else "InvalidRecordException", message))
    return tuple(out)
