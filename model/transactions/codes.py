"""Error codes, transaction states and results, with Kafka's numbers.

Error codes come from ``model/errors.py`` (part 1 of the model) when it exists; until then, and as
a guard against drift, the codes this room needs are declared here with the numbers of
``org.apache.kafka.common.protocol.Errors``. An ``IntEnum`` member compares equal to its int, so the
two enums interoperate; the unit tests pin every value.
"""

from __future__ import annotations

from enum import IntEnum


class Errors(IntEnum):
    """The subset of ``Errors.java`` used by transactions and groups (name = Kafka's name)."""

    NONE = 0
    UNKNOWN_SERVER_ERROR = -1
    UNKNOWN_TOPIC_OR_PARTITION = 3
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    ILLEGAL_GENERATION = 22
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    REBALANCE_IN_PROGRESS = 27
    INVALID_REQUEST = 42
    INVALID_PRODUCER_EPOCH = 47
    INVALID_TXN_STATE = 48
    INVALID_PRODUCER_ID_MAPPING = 49
    CONCURRENT_TRANSACTIONS = 51
    TRANSACTION_COORDINATOR_FENCED = 52
    FENCED_INSTANCE_ID = 82
    #: KIP-447 proposed PENDING_TRANSACTION(85); Kafka shipped UNSTABLE_OFFSET_COMMIT(88) instead
    UNSTABLE_OFFSET_COMMIT = 88
    PRODUCER_FENCED = 90
    TRANSACTION_ABORTABLE = 120


#: The code KIP-447's text gives its proposed error; never shipped (see ``Errors``).
KIP447_PENDING_TRANSACTION = 85


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


NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
