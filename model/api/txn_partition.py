"""The transaction coordinator's ``__transaction_state`` partition, one function per event: its load
(``TransactionStateManager.loadTransactionsForTxnTopicPartition``, the coordinator's immigration) and its unload
(``TransactionCoordinator.onResignation`` -> ``removeTransactionsForTxnTopicPartition``). The rules are
``model.coordinator.txn_partition_cache``'s, per version (``Protocol.txn_reload_replaces``, and KAFKA-14869 through
``Protocol.lacks``)."""

from __future__ import annotations

from ..coordinator.txn_partition_cache import (
    NOT_CACHED,
    LoadResult,
    LogRecord,
    TxnPartitionCache,
    load_partition,
    lookup_error,
    unload_partition,
)
from ..state import TxnMetadata
from ..transactions.failover import load_transaction
from .protocol import Protocol


def handle_load(cache: TxnPartitionCache, coordinator_epoch: int, records: list[LogRecord],
                protocol: Protocol) -> LoadResult:
    """The partition loaded at ``coordinator_epoch`` from ``records`` (its ``__transaction_state`` records, in offset
    order). A version without KAFKA-14869 cannot skip a record of an unknown key version (ValueError)."""
    return load_partition(cache, coordinator_epoch, records, reload_replaces=protocol.txn_reload_replaces,
                          skip_unknown_keys="kafka-14869" not in protocol.lacks)


def loaded_transactions(result: LoadResult, coordinator_epoch: int) -> dict[str, tuple[TxnMetadata, tuple[int, ...], int]]:
    """Each loaded transactional id's metadata and, when the load completed, the partitions of a PrepareCommit /
    PrepareAbort whose markers are sent with the load's epoch and their result (``transactions.failover``)."""
    out: dict[str, tuple[TxnMetadata, tuple[int, ...], int]] = {}
    for tid, value in sorted((result.loaded or {}).items()):
        meta, markers = load_transaction(value, coordinator_epoch)
        sent = markers if result.completed else ()
        out[tid] = (meta, tuple(m.partition for m in sent), sent[0].result if sent else -1)
    return out


def handle_unload(cache: TxnPartitionCache) -> TxnPartitionCache:
    """The coordinator resigns the partition (its queued markers are dropped too: ``removeMarkersForTxnTopicPartition``,
    which the model's coordinator, holding no marker queue, has no counterpart for)."""
    return unload_partition(cache)


__all__ = ["NOT_CACHED", "LoadResult", "LogRecord", "TxnPartitionCache", "handle_load", "handle_unload",
           "loaded_transactions", "lookup_error"]
