"""One ``__transaction_state`` partition in ``TransactionStateManager``'s cache: its load (immigration), a load again
at a newer coordinator epoch without an emigration in between, its unload (emigration), and what a lookup answers.

Read at 2.4.0, 2.5.0, 1eb7644 and 4.2.0-rc1 (TransactionStateManager.scala):

* ``loadTransactionsForTxnTopicPartition(partition, coordinatorEpoch)`` marks the partition loading at that epoch
  (``loadingPartitions``) and schedules the load; the load replays the partition's records in offset order, the last
  record of each transactional id winning and a tombstone removing it (``loadTransactionMetadata``); a record whose key
  version is unknown is skipped (KAFKA-14869, KIP-915 part 1: 33e2fef4553 on the 3.5 branch and 5115906515f on the
  3.4 branch, first tags 3.5.0 and 3.4.1; before, ``readTxnRecordKey`` threw IllegalStateException and the load stopped). The loaded transactions
  replace the partition's cache entry at the new epoch (``addLoadedTransactionsToCache``), the partition stops loading
  and every PrepareCommit / PrepareAbort gets its markers sent with that epoch.
* Loading a partition whose entry is still cached (a become-follower that never unloaded it): from KAFKA-9307
  (0f0eb49e35e, first tag 2.5.0; 30f4fbf51a7 on the 2.4 branch, first tag 2.4.1) the entry is replaced with a warning;
  before, ``addLoadedTransactionsToCache`` put the new entry and then threw IllegalStateException, so the partition
  stayed loading (every lookup COORDINATOR_LOAD_IN_PROGRESS) and no marker was sent: ``Protocol.txn_reload_replaces``.
* ``removeTransactionsForTxnTopicPartition(partition, coordinatorEpoch)`` (``TransactionCoordinator.onResignation``,
  which also drops the partition's queued markers: ``removeMarkersForTxnTopicPartition``) removes the cache entry:
  a lookup is NOT_COORDINATOR until the partition is loaded again. Which loads in progress it cancels differs by version
  (2.4: scheduled through leavingPartitions; 1eb7644: the load at the same epoch; 4.2.0-rc1
  ``removeLoadingPartitionWithEpoch``: a load at an older epoch), so the model unloads only a partition not loading.
* A lookup (``getAndMaybeAddTransactionState``): COORDINATOR_LOAD_IN_PROGRESS while the partition is loading, else
  NOT_COORDINATOR without a cache entry.

No machine reads this module (``transactions.failover`` loads one record per transactional id for kafka.eos); the
conformance interface does.
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import Errors
from ..state import TxnLogValue

#: the partition has no cache entry (``transactionMetadataCache`` holds none)
NOT_CACHED = -1


class TxnPartitionCache(NamedTuple):
    #: the coordinator epoch of the partition's cache entry (NOT_CACHED: none)
    cached_epoch: int = NOT_CACHED
    #: the coordinator epochs the partition is loading at (``loadingPartitions``), sorted
    loading: tuple[int, ...] = ()


class LogRecord(NamedTuple):
    """A ``__transaction_state`` record as the load reads it: ``value`` None is a tombstone; ``known_key`` False is a
    key of a version this broker does not know (a later one's record type)."""

    transactional_id: str
    value: TxnLogValue | None
    known_key: bool = True


class LoadResult(NamedTuple):
    cache: TxnPartitionCache
    #: transactional id -> its last record (the loaded transactions); None when the load did not reach the cache
    loaded: dict[str, TxnLogValue] | None
    #: the load completed (the partition stopped loading; markers are sent for the prepared transactions)
    completed: bool


def replay_records(records: list[LogRecord], *, skip_unknown_keys: bool) -> dict[str, TxnLogValue]:
    """``loadTransactionMetadata``: the partition's records in offset order; ``skip_unknown_keys``: KAFKA-14869."""
    loaded: dict[str, TxnLogValue] = {}
    for rec in records:
        if not rec.known_key:
            if not skip_unknown_keys:
                raise ValueError("a record key of an unknown version stops the load before KAFKA-14869")
            continue
        if rec.value is None:
            loaded.pop(rec.transactional_id, None)
        else:
            loaded[rec.transactional_id] = rec.value
    return loaded


def load_partition(cache: TxnPartitionCache, coordinator_epoch: int, records: list[LogRecord], *,
                   reload_replaces: bool, skip_unknown_keys: bool) -> LoadResult:
    """``loadTransactionsForTxnTopicPartition`` and its scheduled load; ``reload_replaces``: KAFKA-9307."""
    loading = tuple(sorted(set(cache.loading) | {coordinator_epoch}))
    loaded = replay_records(records, skip_unknown_keys=skip_unknown_keys)
    if cache.cached_epoch != NOT_CACHED and not reload_replaces:
        # the new entry is put, then IllegalStateException: the partition is left loading, no marker is sent
        return LoadResult(TxnPartitionCache(coordinator_epoch, loading), loaded, False)
    return LoadResult(TxnPartitionCache(coordinator_epoch, tuple(e for e in loading if e != coordinator_epoch)),
                      loaded, True)


def unload_partition(cache: TxnPartitionCache) -> TxnPartitionCache:
    """``removeTransactionsForTxnTopicPartition`` of a partition not loading (see the module's note)."""
    if cache.loading:
        raise ValueError("which loads an emigration cancels differs by version")
    return TxnPartitionCache(NOT_CACHED, ())


def lookup_error(cache: TxnPartitionCache) -> int:
    """What ``getTransactionState`` answers before reading the entry (NONE: the entry is read)."""
    if cache.loading:
        return int(Errors.COORDINATOR_LOAD_IN_PROGRESS)
    if cache.cached_epoch == NOT_CACHED:
        return int(Errors.NOT_COORDINATOR)
    return int(Errors.NONE)
