"""A transactional output partition's replicas: the producer state a replica that becomes leader
starts with (``kafka.eos``'s ``TxnLeaderFailover``).

Three kinds of replica can take over a partition:

- the **in-sync follower**, whose producer state was built by replication (the same appends as the
  leader's, so the same table);
- a replica **restarted from its log** without producer-state snapshots (``LogLoader`` /
  ``UnifiedLog.rebuildProducerState`` with no snapshot: every batch and marker from the log start
  offset is replayed as a replication append, without validation);
- a replica **restored from a producer-state snapshot** taken at some offset ``S`` at or above the log
  start offset (snapshots below it are deleted): the snapshot's entries (``ProducerStateManager.
  readSnapshot``: one ``BatchMetadata`` per producer, its epoch, coordinator epoch, lastTimestamp and
  ``currentTxnFirstOffset``), minus those already expired when loaded (``loadFromSnapshot`` filters
  with ``isProducerExpired``), then the log from ``S`` replayed on top. A snapshot may predate an
  open transaction's first batch or a marker; the replay brings them back.

Replaying needs each batch's sequence and timestamp, which ``transactions.log.LogEntry`` does not
hold, so a machine with failovers writes ``StampedEntry`` values (the same first four fields, read
the same way by every rule of ``transactions.log``).

Version differences (``Protocol.marker_sets_producer_timestamp``, KAFKA-9144, fixed in 2.4.1 and
2.5.0): before the fix a producer's lastTimestamp was its last cached data batch's, and NO_TIMESTAMP
(-1) when it had none, which is the case once a marker with a new epoch (the coordinator's fencing
abort) cleared its cache. Such an entry counts as expired at once: the leader's next expiry check
drops it, and a replica loading it from a snapshot skips it. Both lose the producer's fencing epoch
and coordinator epoch.
"""

from __future__ import annotations

from typing import NamedTuple

from ..state import ProducerStateEntry, TxnPartitionState
from ..transactions.log import EntryKind, LogEntry
from .producer_state import (
    Producers,
    add_batch,
    begin_transaction,
    empty_entry,
    end_transaction,
    find_entry,
    is_producer_expired,
    put_entry,
    truncate_head,
)

#: NO_TIMESTAMP: the lastTimestamp of an entry without cached batches before KAFKA-9144
NO_TIMESTAMP = -1


class StampedEntry(NamedTuple):
    """A log entry with what a replica replaying it needs: the batch's sequence (-1 for a marker) and
    its timestamp (a data batch's CreateTime, a marker's append time)."""

    producer_id: int
    producer_epoch: int
    kind: int
    value: int
    seq: int
    timestamp: int


def stamp(before: TxnPartitionState, after: TxnPartitionState, seq: int, timestamp: int) -> TxnPartitionState:
    """``after`` with the entry it appended to ``before``'s log (if any) carrying ``seq`` and ``timestamp``."""
    if len(after.log) == len(before.log):
        return after
    e = after.log[-1]
    # A replica's log holds StampedEntry, LogEntry's fields plus two, where TxnPartitionState declares
    # LogEntry: the log rules read only the shared fields (a NamedTuple cannot extend another).
    return after._replace(log=after.log[:-1] + (StampedEntry(e.producer_id, e.producer_epoch,  # type: ignore[operator]
                                                             e.kind, e.value, seq, timestamp),))


def marker_timestamp(before: ProducerStateEntry | None, after: ProducerStateEntry,
                     sets_timestamp: bool) -> ProducerStateEntry:
    """The entry after a marker, with lastTimestamp as the version keeps it: the marker's own (KAFKA-9144)
    or, before, the last cached data batch's (NO_TIMESTAMP once the marker's new epoch cleared the cache)."""
    if sets_timestamp:
        return after
    kept = before.last_timestamp if before is not None and after.batches else NO_TIMESTAMP
    return after._replace(last_timestamp=kept)


def replay(producers: Producers, log: tuple[LogEntry, ...], start: int, end: int, *, cache_size: int,
           sets_timestamp: bool) -> Producers:
    """``producers`` after the entries ``log[start:end]`` are appended by replication (no checks): a data
    batch joins its producer's cache and opens its transaction, a marker closes it."""
    for offset in range(start, end):
        e = log[offset]
        entry = find_entry(producers, e.producer_id)
        timestamp = getattr(e, "timestamp", 0)
        if e.kind == EntryKind.TXN_DATA:
            updated = begin_transaction(add_batch(entry, e.producer_id, e.producer_epoch, getattr(e, "seq", -1),
                                                  offset, timestamp, cache_size), offset)
        elif e.kind in (EntryKind.COMMIT, EntryKind.ABORT):
            base = entry if entry is not None else empty_entry(e.producer_id)
            updated = marker_timestamp(entry, end_transaction(base, e.producer_epoch, e.value, timestamp),
                                       sets_timestamp)
        else:
            continue
        producers = put_entry(producers, updated)
    return producers


def rebuilt_from_log(leader: TxnPartitionState, *, cache_size: int, sets_timestamp: bool) -> Producers:
    """A replica restarted without snapshots: the log from the log start offset, replayed."""
    return replay((), leader.log, leader.log_start_offset, len(leader.log), cache_size=cache_size,
                  sets_timestamp=sets_timestamp)


def snapshot_at(leader: TxnPartitionState, offset: int, *, cache_size: int, sets_timestamp: bool,
                retain_producer_state: bool) -> Producers:
    """The producer-state snapshot a replica took at ``offset``: its table then (built from the whole log
    below ``offset``, with the producers a log start offset move evicted before KAFKA-7190 gone), one
    cached batch per producer (``writeSnapshot`` keeps the last)."""
    producers = replay((), leader.log, 0, offset, cache_size=cache_size, sets_timestamp=sets_timestamp)
    if not retain_producer_state:
        producers = truncate_head(producers, leader.log_start_offset)
    return tuple(e._replace(batches=e.batches[-1:]) for e in producers)


def restored_from_snapshot(leader: TxnPartitionState, offset: int, *, now: int, expiration: int, cache_size: int,
                           sets_timestamp: bool, retain_producer_state: bool) -> Producers:
    """A replica restarted from its snapshot at ``offset``: the entries not expired at load, then the log
    from ``offset`` replayed."""
    loaded = tuple(e for e in snapshot_at(leader, offset, cache_size=cache_size, sets_timestamp=sets_timestamp,
                                          retain_producer_state=retain_producer_state)
                   if not is_producer_expired(e, now, expiration))
    return replay(loaded, leader.log, offset, len(leader.log), cache_size=cache_size, sets_timestamp=sets_timestamp)


def snapshot_offsets(leader: TxnPartitionState) -> range:
    """Where a snapshot the replica still has can lie: from the log start offset (older ones are
    deleted with their segments) to the log end (taken at a clean shutdown)."""
    return range(leader.log_start_offset, len(leader.log) + 1)


__all__ = ["NO_TIMESTAMP", "StampedEntry", "marker_timestamp", "rebuilt_from_log", "replay", "restored_from_snapshot",
           "snapshot_at", "snapshot_offsets", "stamp"]
