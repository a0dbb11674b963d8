"""The partition log with its log start offset: append, retention / DeleteRecords, expiry."""

from __future__ import annotations

from ..state import LogRecord, PartitionState
from .producer_state import add_batch, find_entry, put_entry, remove_expired_producers, truncate_head


def append_batch(partition: PartitionState, record: LogRecord, created: int, cache_size: int) -> tuple[PartitionState, int]:
    """Append one batch at the log end; the producer state is updated only after the append
    succeeds (KAFKA-6683). Returns the new partition and the batch's offset."""
    offset = len(partition.log)
    entry = find_entry(partition.producers, record.producer_id)
    new_entry = add_batch(entry, record.producer_id, record.epoch, record.seq, offset, created, cache_size)
    return partition._replace(log=partition.log + (record,),
                              producers=put_entry(partition.producers, new_entry)), offset


def advance_log_start_offset(partition: PartitionState, new_start: int, retain_producer_state: bool) -> PartitionState:
    """Retention or DeleteRecords moves the log start offset (``maybeIncrementLogStartOffset``).
    Before KAFKA-7190 (2.5) this also evicted producers whose last batch fell below it; since,
    the producer state is kept ("prolonged retention") and only expiry removes it."""
    producers = partition.producers if retain_producer_state else truncate_head(partition.producers, new_start)
    return partition._replace(log_start_offset=new_start, producers=producers)


def expire_producers(partition: PartitionState, now: int, expiration: int) -> PartitionState:
    """``removeExpiredProducers``: drop entries idle for at least ``expiration`` ticks."""
    return partition._replace(producers=remove_expired_producers(partition.producers, now, expiration))
