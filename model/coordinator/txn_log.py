"""Persisting a transactional id's metadata to ``__transaction_state`` and loading it on failover.

The one place where a ``TxnMetadata`` becomes a ``TxnLogValue`` and back (both machines use it;
``model.transactions.metadata.to_log_record`` / ``from_log_record`` are these with Kafka's defaults).
What a record keeps is a switch: the KIP-360 text adds LastProducerId and LastEpoch to the record
(``persist_prev_producer_id`` / ``persist_last_epoch`` both True); Kafka never wrote
lastProducerEpoch, and wrote PreviousProducerId only in later trunk with transaction.version >= 1.
A field that is not persisted loads as -1 (``TransactionLog.readTxnRecordValue``).

The client's transaction version is persisted: ``valueToBytes`` sets ClientTransactionVersion (tagged field 2 of
value version 1, written when transaction.version >= 1) and ``readTxnRecordValue`` reads it back, from the 2024-10
snapshot (1eb7644) to 4.2.0-rc1. Before, there is no such field, and no metadata has a version other than 0; a
version other than 0 needs transaction.version 2, so the record carrying it is always version 1.
"""

from __future__ import annotations

from ..errors import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, Errors
from ..state import TxnLogValue, TxnMetadata
from ..transactions.codes import TxnState

NO_LOG_VALUE = TxnLogValue(False, NO_PRODUCER_ID, NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_PRODUCER_EPOCH, 0)
NO_METADATA = TxnMetadata(False, NO_PRODUCER_ID, NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_PRODUCER_EPOCH, 0, False)


def to_log_value(meta: TxnMetadata, *, persist_last_epoch: bool = False,
                 persist_prev_producer_id: bool = False) -> TxnLogValue:
    """The record ``prepareTransitionTo``'s append writes (defaults: what the 2024 snapshot writes)."""
    # an Empty record carries no partitions (TransactionLog.valueToBytes writes null)
    parts = meta.partitions if meta.state != TxnState.EMPTY else ()
    return TxnLogValue(True, meta.producer_id,
                       meta.prev_producer_id if persist_prev_producer_id else NO_PRODUCER_ID,
                       meta.epoch,
                       meta.last_epoch if persist_last_epoch else NO_PRODUCER_EPOCH,
                       meta.state, parts, meta.tv)


def load_metadata(value: TxnLogValue) -> TxnMetadata:
    """The metadata a new coordinator rebuilds from the log: in-memory-only fields are gone
    (pending state, hasFailedEpochFence, and whatever the record does not carry)."""
    if not value.exists:
        return NO_METADATA
    return TxnMetadata(True, value.producer_id, value.prev_producer_id, value.epoch, value.last_epoch, value.state,
                       False, -1, value.partitions, tv=value.tv)


def append_error_answer(error: int) -> int:
    """The error ``TransactionStateManager.appendTransactionToLog`` hands its callback for a failed
    ``__transaction_state`` append: replication and timeout errors become COORDINATOR_NOT_AVAILABLE
    (the client retries), a lost leadership or storage error NOT_COORDINATOR (the client looks the
    coordinator up again), record-size errors UNKNOWN_SERVER_ERROR; anything else is passed on."""
    if error in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_ENOUGH_REPLICAS,
                 Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.REQUEST_TIMED_OUT):
        return int(Errors.COORDINATOR_NOT_AVAILABLE)
    if error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR):
        return int(Errors.NOT_COORDINATOR)
    if error in (Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE):
        return int(Errors.UNKNOWN_SERVER_ERROR)
    return int(error)
