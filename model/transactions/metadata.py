"""``TransactionMetadata`` as an immutable record, and the transition helpers that build the next one.

Kafka mutates metadata in two phases (prepare -> append to ``__transaction_state`` -> complete). The
model applies a transition in one step when the log append is modelled as atomic; ``pending_state``
is kept so the CONCURRENT_TRANSACTIONS answers to a request that races an in-flight append can be
modelled where a machine splits the append into its own step.
"""

from __future__ import annotations

from typing import Any

from ..coordinator.txn_log import load_metadata, to_log_value
from ..state import TxnLogValue, TxnMetadata
from .codes import NO_PENDING, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TxnState

#: One transactional id's metadata on its transaction coordinator: part 1's record, which carries
#: ``pending_state`` and ``partitions`` for the transaction state machine.
TxnMeta = TxnMetadata


def new_metadata(producer_id: int) -> TxnMeta:
    """Metadata as ``handleInitProducerId`` creates it for an unknown transactional id (epoch -1, Empty)."""
    return TxnMeta(True, producer_id, NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_PRODUCER_EPOCH, int(TxnState.EMPTY),
                   False, NO_PENDING, ())


def transit(meta: TxnMeta, **changes: Any) -> TxnMeta:
    """``prepareTransitionTo`` + ``completeTransitionTo`` as shipped: every transition records the
    producer id it starts from as ``previousProducerId`` (for the transitions of this room the
    producer id does not change, so previousProducerId becomes the producer id)."""
    return meta._replace(prev_producer_id=meta.producer_id, **changes)


def with_partitions(meta: TxnMeta, added: tuple[int, ...]) -> tuple[int, ...]:
    """``topicPartitions ++ added``, kept sorted so equal sets are equal states."""
    return tuple(sorted(set(meta.partitions) | set(added)))


#: A ``__transaction_state`` record: part 1's record (``model.coordinator.txn_log`` writes and loads it).
TxnLogRecord = TxnLogValue


def to_log_record(meta: TxnMeta, *, persist_previous_producer_id: bool = False) -> TxnLogRecord:
    """What the 2024 snapshot writes (TV0/TV1): no lastProducerEpoch (never persisted); PreviousProducerId
    only with ``persist_previous_producer_id`` (the later trunk with log version >= 1)."""
    return to_log_value(meta, persist_last_epoch=False, persist_prev_producer_id=persist_previous_producer_id)


def from_log_record(rec: TxnLogRecord) -> TxnMeta:
    """``TransactionLog.readTxnRecordValue``: lastProducerEpoch is always -1 after a load."""
    return load_metadata(rec)
