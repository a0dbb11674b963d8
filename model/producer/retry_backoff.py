"""How long the transactional producer waits before it sends a transactional request again: ``TxnRequestHandler``'s
``retryBackoffMs``, which ``Sender.maybeSendAndPollTransactionalRequest`` sleeps (``if (nextRequestHandler.isRetry())
time.sleep(nextRequestHandler.retryBackoffMs())``) before a re-enqueued request; a request sent the first time does not
wait.

The handler's back-off is the producer's ``retry.backoff.ms``, except that AddPartitionsToTxnHandler answered
CONCURRENT_TRANSACTIONS while the transaction holds no partition yet lowers it to 20 ms (``maybeOverrideRetryBackoffMs``,
``ADD_PARTITIONS_RETRY_BACKOFF_MS``; ``retryBackoffMs()`` answers the smaller of the two): the previous transaction is
still completing and the first AddPartitionsToTxn of the new one should not wait long (KAFKA-5477, 254add95347, first
tag 1.0.0). Any other retriable answer, or CONCURRENT_TRANSACTIONS once a partition is in the transaction, keeps
``retry.backoff.ms``. Read at 1.0.0, 2.0.0, 2.5.0, 3.0.0, 3.6.0, 3.7.0 (KIP-580's exponential back-off, 3.7.0, is the
Sender's and the metadata's, not the transactional handler's), 1eb7644, 4.1.0 and 4.2.0-rc1: the same.

No machine reads this module (kafka.eos abstracts time); the conformance interface does.
"""

from __future__ import annotations

from ..errors import Errors

#: TransactionManager.ADD_PARTITIONS_RETRY_BACKOFF_MS
ADD_PARTITIONS_RETRY_BACKOFF_MS = 20

#: ProducerConfig's default retry.backoff.ms
DEFAULT_RETRY_BACKOFF_MS = 100


def retry_backoff_ms(api: str, error: int, *, partitions_in_transaction: bool, retry_backoff: int) -> int:
    """The re-enqueued handler's ``retryBackoffMs()`` after answer ``error`` to request ``api``."""
    if api == "AddPartitionsToTxn" and error == Errors.CONCURRENT_TRANSACTIONS and not partitions_in_transaction:
        return min(retry_backoff, ADD_PARTITIONS_RETRY_BACKOFF_MS)
    return retry_backoff


def send_delay_ms(*, is_retry: bool, handler_backoff: int) -> int:
    """What the Sender sleeps before it sends the next transactional request: the handler's back-off for a retry,
    nothing for a first send."""
    return handler_backoff if is_retry else 0
