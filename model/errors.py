"""Kafka's protocol error codes, named and numbered as in ``clients/.../protocol/Errors.java``.

Only the codes the model can produce or react to are listed. States hold the int value (an
IntEnum is an int, so it hashes like one and keeps fingerprints stable across processes).
"""

from __future__ import annotations

from enum import IntEnum


class Errors(IntEnum):
    NONE = 0
    UNKNOWN_SERVER_ERROR = -1
    CORRUPT_MESSAGE = 2
    UNKNOWN_TOPIC_OR_PARTITION = 3
    LEADER_NOT_AVAILABLE = 5
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    MESSAGE_TOO_LARGE = 10
    #: no machine produces it; an offset commit's metadata over offset.metadata.max.bytes (the conformance interface)
    OFFSET_METADATA_TOO_LARGE = 12
    #: a broker-to-broker request lost its connection (AddPartitionsToTxnManager's verification)
    NETWORK_EXCEPTION = 13
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    INVALID_REQUIRED_ACKS = 21
    ILLEGAL_GENERATION = 22
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    REBALANCE_IN_PROGRESS = 27
    #: no machine produces it; the producer client reads it (AddPartitionsToTxn, produce: abortable
    #: TopicAuthorizationException naming the topics)
    TOPIC_AUTHORIZATION_FAILED = 29
    #: no machine produces it; TxnOffsetCommitHandler names it (abortable GroupAuthorizationException)
    GROUP_AUTHORIZATION_FAILED = 30
    #: no machine produces it; the producer client reads it (InitProducerId, produce: ClusterAuthorizationException)
    CLUSTER_AUTHORIZATION_FAILED = 31
    UNSUPPORTED_VERSION = 35
    INVALID_REQUEST = 42
    UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
    OUT_OF_ORDER_SEQUENCE_NUMBER = 45
    DUPLICATE_SEQUENCE_NUMBER = 46
    INVALID_PRODUCER_EPOCH = 47
    INVALID_TXN_STATE = 48
    INVALID_PRODUCER_ID_MAPPING = 49
    INVALID_TRANSACTION_TIMEOUT = 50
    CONCURRENT_TRANSACTIONS = 51
    TRANSACTION_COORDINATOR_FENCED = 52
    #: no machine produces it; the transactional handlers name it (fatal TransactionalIdAuthorizationException)
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
    #: KafkaApis' answer for the partitions of an AddPartitionsToTxn it refused because of another one
    OPERATION_NOT_ATTEMPTED = 55
    KAFKA_STORAGE_ERROR = 56
    UNKNOWN_PRODUCER_ID = 59
    FENCED_INSTANCE_ID = 82
    #: OffsetDelete of a topic the group is subscribed to (KIP-496, 2.4.0)
    GROUP_SUBSCRIBED_TO_TOPIC = 86
    #: no machine produces it; a produce answer whose records failed the broker's validation, with record errors
    #: (KIP-467, KAFKA-8729 f6f24c4700, 2.4.0; the producer without idempotence of the conformance interface)
    INVALID_RECORD = 87
    #: KIP-447 proposed PENDING_TRANSACTION(85); Kafka shipped UNSTABLE_OFFSET_COMMIT(88) instead
    UNSTABLE_OFFSET_COMMIT = 88
    PRODUCER_FENCED = 90
    #: no machine produces it; DescribeTransactions' answer for an id the coordinator does not hold (KIP-664, 3.0.0)
    TRANSACTIONAL_ID_NOT_FOUND = 105
    TRANSACTION_ABORTABLE = 120
    #: no machine produces it; ListTransactions' answer to a transactional-id pattern that does not compile (KIP-1152,
    #: 4.1.0)
    INVALID_REGULAR_EXPRESSION = 128


#: The code KIP-447's text gives its proposed error; never shipped (see ``Errors``).
KIP447_PENDING_TRANSACTION = 85


#: Errors the Java client maps to a ``RetriableException`` (retried until delivery.timeout.ms). NETWORK_EXCEPTION's
#: NetworkException is an InvalidMetadataException, so a RetriableException (every version modelled, 2.0.0 to
#: 4.2.0-rc1); only a disconnect gives it to the client (``Sender.handleProduceResponse``, ``TxnRequestHandler``'s
#: reenqueue on a disconnect), and KAFKA-19176's wrapping (4.1.0) reads it as retriable too.
RETRIABLE: frozenset[int] = frozenset({
    Errors.NETWORK_EXCEPTION,
    Errors.LEADER_NOT_AVAILABLE, Errors.NOT_LEADER_OR_FOLLOWER, Errors.REQUEST_TIMED_OUT, Errors.COORDINATOR_LOAD_IN_PROGRESS,
    Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR, Errors.NOT_ENOUGH_REPLICAS,
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.KAFKA_STORAGE_ERROR,
    Errors.CONCURRENT_TRANSACTIONS, Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNSTABLE_OFFSET_COMMIT,
})

#: Sentinels of the wire protocol (``RecordBatch.NO_PRODUCER_ID`` etc.).
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1


def error_name(code: int) -> str:
    """The Kafka name of an error code, for traces (``str(code)`` for a code not listed)."""
    try:
        return Errors(code).name
    except ValueError:
        return str(code)
