"""Transaction states and results, with Kafka's numbers; error codes re-exported from ``model.errors``.

Kafka's error codes live in one enum (``model/errors.py``); they are re-exported here so the
transactions and group rooms can keep importing ``Errors`` next to ``TxnState``.
"""

from __future__ import annotations

from enum import IntEnum

from ..errors import KIP447_PENDING_TRANSACTION, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, Errors

__all__ = [
    "KIP447_PENDING_TRANSACTION",
    "NO_PENDING",
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "Errors",
    "TxnResult",
    "TxnState",
]


class TxnState(IntEnum):
    """``TransactionState`` ids as written in ``__transaction_state`` (``TransactionState.fromId``)."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7


#: ``TransactionMetadata.pendingState == None`` (states hold ints only)
NO_PENDING = -1


class TxnResult(IntEnum):
    """``TransactionResult``: ABORT(false), COMMIT(true)."""

    ABORT = 0
    COMMIT = 1

