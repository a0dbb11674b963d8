"""KIP-664's hanging-transaction detection on a partition leader: ``ProducerStateManager.hasLateTransaction``
(KAFKA-13221, 915991445fd, first tag 3.2.0; the same rule at 3.5.0's Java class and at 4.2.0-rc1, l.130-133 and
l.403-412): the oldest ongoing transaction (the lowest first offset among ``ongoingTxns``) is late when its producer's
``lastTimestamp`` is positive and more than ``max.transaction.timeout.ms`` plus a 5-minute buffer
(``LATE_TRANSACTION_BUFFER_MS``) behind the time asked about. Kafka caches that timestamp (``oldestTxnLastTimestamp``)
after every append, completed transaction, reload and full truncation; reading it from the producer state at the
moment asked gives the same answer after each of those.

The composed machines abstract time; no machine reads this module. The conformance interface does, for
ProducerStateManagerTest, with its explicit clock (``now_ms``, ``advance_time``) and the producers' timestamps.
"""

from __future__ import annotations

from ..state import ProducerStateEntry

#: ProducerStateManager.LATE_TRANSACTION_BUFFER_MS (LateTransactionBufferMs in 3.2's Scala class)
LATE_TRANSACTION_BUFFER_MS = 5 * 60 * 1000


def oldest_txn_last_timestamp(producers: tuple[ProducerStateEntry, ...]) -> int:
    """``oldestTxnLastTimestamp``: the last timestamp of the producer whose ongoing transaction started first on the
    partition, -1 when none is ongoing."""
    open_txns = [e for e in producers if e.current_txn_first_offset >= 0]
    if not open_txns:
        return -1
    return min(open_txns, key=lambda e: e.current_txn_first_offset).last_timestamp


def has_late_transaction(producers: tuple[ProducerStateEntry, ...], now_ms: int, max_txn_timeout_ms: int) -> bool:
    last = oldest_txn_last_timestamp(producers)
    return last > 0 and now_ms - last > max_txn_timeout_ms + LATE_TRANSACTION_BUFFER_MS
