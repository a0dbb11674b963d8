"""The partition log with its log start offset: append, retention / DeleteRecords, expiry."""

from __future__ import annotations

from ..state import LogRecord, PartitionState
from .producer_state import add_batch, find_entry, put_entry, remove_expired_producers, truncate_head


def record_batch(producers: tuple, record: LogRecord, offset: int, cache_size: int) -> tuple:
    """The producer state after ``record`` is appended at ``offset`` (on the leader after its
    checks; on a follower by replication, which skips the sequence checks)."""
    entry = find_entry(producers, record.producer_id)
    return put_entry(producers, add_batch(entry, record.producer_id, record.epoch, record.seq, offset,
                                          record.timestamp, cache_size))


def append_batch(partition: PartitionState, record: LogRecord, cache_size: int) -> tuple[PartitionState, int]:
    """Append one batch at the log end; the producer state is updated only after the append
    succeeds (KAFKA-6683). Returns the new partition and the batch's offset."""
    offset = len(partition.log)
    return partition._replace(log=partition.log + (record,),
                              producers=record_batch(partition.producers, record, offset, cache_size)), offset


def advance_log_start_offset(partition: PartitionState, new_start: int, retain_producer_state: bool) -> PartitionState:
    """Retention or DeleteRecords moves the log start offset (``maybeIncrementLogStartOffset``).
    Before KAFKA-7190 (2.4) this also evicted producers whose last batch fell below it; since,
    the producer state is kept ("prolonged retention") and only expiry removes it."""
    producers = partition.producers if retain_producer_state else truncate_head(partition.producers, new_start)
    return partition._replace(log_start_offset=new_start, producers=producers)


def rebuild_producer_state(log: tuple[LogRecord, ...], log_start_offset: int, cache_size: int) -> tuple:
    """The producer state a replica rebuilds from its log after losing its snapshots (a restart
    after the snapshots below the log start offset were deleted, or a newly assigned replica):
    only producers with batches at or above the log start offset are known (KIP-360, "a new
    replica will only see the producers which have state in the log")."""
    producers: tuple = ()
    for offset in range(log_start_offset, len(log)):
        producers = record_batch(producers, log[offset], offset, cache_size)
    return producers


def expire_producers(partition: PartitionState, now: int, expiration: int) -> PartitionState:
    """``removeExpiredProducers``: drop entries idle for at least ``expiration`` ticks."""
    return partition._replace(producers=remove_expired_producers(partition.producers, now, expiration))
