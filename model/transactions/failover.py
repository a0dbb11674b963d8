"""Transaction coordinator failover (``TransactionStateManager.loadTransactionsForTxnTopicPartition``).

A new coordinator loads the last record of each transactional id from ``__transaction_state`` with a
higher coordinator epoch. In-memory-only fields are lost: pending states, ``lastProducerEpoch`` (-1)
and, unless persisted, ``previousProducerId``. Every loaded PrepareCommit / PrepareAbort is
completed by re-sending its markers with the new coordinator epoch; the old coordinator's markers
still in flight carry the old epoch and are refused with TRANSACTION_COORDINATOR_FENCED by leaders
that already took a newer one.
"""

from __future__ import annotations

from .markers import TxnMarker, markers_to_send
from .metadata import TxnLogRecord, TxnMeta, from_log_record


def load_transaction(rec: TxnLogRecord, new_coordinator_epoch: int) -> tuple[TxnMeta, tuple[TxnMarker, ...]]:
    """The metadata a new coordinator holds for one loaded record and the markers it must send."""
    meta = from_log_record(rec)
    return meta, markers_to_send(meta, new_coordinator_epoch)
