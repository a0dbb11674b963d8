"""Transactional ids over several __transaction_state partitions, and which of them the coordinator's expiry task
writes tombstones to (``TransactionStateManager.partitionFor`` and ``removeExpiredTransactionalIds``).

Read at apache/kafka 2.8.0, 2.8.1, 3.0.0, 3.1.0 and at 4.1.0 (aiven/inkless, core/.../TransactionStateManager.scala
l.151-257). ``partitionFor(transactionalId)`` is ``Utils.abs(transactionalId.hashCode) % transactionTopicPartitionCount``
at every version.

KAFKA-13099 ("Transactional expiration should account for max batch size", c5ec390fa6f on trunk, first tag 3.1.0;
backported as 3356faf8de1 to 2.6.3, b317f7fa543 to 2.7.2, facf5e9be9e to 2.8.1 and cd233e92b0a to 3.0.0) made the task
run per partition: a partition whose log config is unavailable (``replicaManager.getLogConfig`` answers None: an
offline log directory, or a partition no longer local) is skipped with a warning, so no tombstone is appended for it
and its ids are left untouched (no ``prepareDead``, so no pending state) and stay expirable; for the others the
tombstones go in batches bounded by the log's ``max.message.bytes`` (a full batch is flushed and the id retried in the
next one; an empty batch takes one tombstone whatever its size, ``MemoryRecordsBuilder.hasRoomFor``), each batch
appended on its own, so every expirable id of an online partition gets its tombstone. Before it (2.8.0 and older) one
``appendRecords`` call carried one batch per partition, however large, and asked no log config: a batch past the
maximum failed as a whole (the expiry the ticket calls stuck), and an offline partition's append was attempted.

How many batches a partition's tombstones take is record encoding (bytes per key); the model says which partitions
get an append and which ids expire. No machine reads this module (kafka.eos keeps one transactional id); the
conformance interface does, for TransactionStateManagerTest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

_INT_MIN = -(2 ** 31)


def java_string_hash(s: str) -> int:
    """``String.hashCode`` (UTF-16 code units, 32-bit two's complement), which ``partitionFor`` hashes."""
    h = 0
    for unit in s.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h - 2 ** 32 if h >= 2 ** 31 else h


def partition_for(transactional_id: str, partition_count: int) -> int:
    """``TransactionStateManager.partitionFor``: ``Utils.abs(hashCode) % transactionTopicPartitionCount``
    (``Utils.abs`` maps Integer.MIN_VALUE to 0)."""
    if partition_count <= 0:
        raise ValueError("the __transaction_state partition count is positive")
    h = java_string_hash(transactional_id)
    return (0 if h == _INT_MIN else abs(h)) % partition_count


def tombstone_partitions(expirable: Mapping[str, int], offline: Iterable[int]) -> tuple[int, ...]:
    """With KAFKA-13099: the partitions ``removeExpiredTransactionalIds`` appends tombstones to, given each
    expirable id's partition and the partitions whose log config is unavailable (skipped: their ids stay)."""
    skipped = frozenset(offline)
    return tuple(sorted({p for p in expirable.values() if p not in skipped}))


__all__ = ["java_string_hash", "partition_for", "tombstone_partitions"]
