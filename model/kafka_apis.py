"""KafkaApis' checks before a transactional request reaches a coordinator or the log: partitions the
broker's metadata cache does not know (AddPartitionsToTxn, TxnOffsetCommit) and partitions the broker
does not host or whose log is older than message format v2 (WriteTxnMarkers).

Read at apache/kafka 1eb7644 (``KafkaApis.handleAddPartitionsToTxnRequest``, ``handleTxnOffsetCommitRequest``,
``handleWriteTxnMarkersRequest``); 2.0.0, 2.5.0 and 3.0.0 check the same way. Authorization, which comes first,
is modelled for AddPartitionsToTxn and WriteTxnMarkers (session 29, conf29a; InitProducerId's is
``api.coordinator.authorize_init``): the ACL answers are given as the operations the authorizer denies, each
``(resource type, operation, name)``. No machine reads this module: the model's partitions all exist, are hosted
and use format v2, and its clients are authorized; the conformance interface does, for KafkaApisTest.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from .errors import Errors

#: RecordBatch.MAGIC_VALUE_V2: the first format with producer ids and control batches
MAGIC_V2 = 2


#: ``Topic.isInternal``: a client may not add these to a transaction by name (AddOffsetsToTxn adds the group's
#: __consumer_offsets partition itself)
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
#: the cluster resource's name (``Resource.CLUSTER_NAME``)
CLUSTER = "kafka-cluster"

#: an ACL decision the authorizer denies: (resource type, operation, resource name)
Denied = tuple[str, str, str]
#: an authorizer that denies every action (KafkaApisTest's mock answering DENIED to any list of actions)
DENY_ALL: Denied = ("*", "*", "*")


def allowed(denied: Collection[Denied], resource_type: str, operation: str, name: str) -> bool:
    """``authHelper.authorize``: without an authorizer (nothing denied) every action is allowed."""
    return DENY_ALL not in denied and (resource_type, operation, name) not in denied


def add_partitions_errors(partitions: Sequence[str], known: Callable[[str], bool],
                          topic_allowed: Callable[[str], bool] | None = None) -> dict[str, int] | None:
    """A client's AddPartitionsToTxn (v0-3; a broker's v4 the same, without ``topic_allowed``): None when every
    partition passes (the coordinator takes the request); otherwise the whole transaction's request is refused
    without reaching the coordinator: TOPIC_AUTHORIZATION_FAILED for a partition of an internal topic or of one
    the client may not WRITE (``topic_allowed``: v0-3 only), else UNKNOWN_TOPIC_OR_PARTITION for one the metadata
    cache does not know, and OPERATION_NOT_ATTEMPTED for the others. 2.0.1's handleAddPartitionToTxnRequest checks
    the same (``Topic.isInternal(topic) || !authorize(Write, Topic)``)."""
    def error(tp: str) -> Errors | None:
        if topic_allowed is not None and (tp.rsplit("-", 1)[0] in INTERNAL_TOPICS or not topic_allowed(tp)):
            return Errors.TOPIC_AUTHORIZATION_FAILED
        return None if known(tp) else Errors.UNKNOWN_TOPIC_OR_PARTITION
    errors = {tp: error(tp) for tp in partitions}
    if all(e is None for e in errors.values()):
        return None
    return {tp: int(Errors.OPERATION_NOT_ATTEMPTED if e is None else e) for tp, e in errors.items()}


def add_partitions_authorization(version: int, transactional_id: str, partitions: Sequence[str],
                                 denied: Collection[Denied], known: Callable[[str], bool]
                                 ) -> tuple[int, dict[str, int]] | None:
    """KafkaApis.handleAddPartitionsToTxnRequest before the coordinator, authorization first (1eb7644 l.2507-2580):
    ``(top-level error, per-partition errors)`` of a refused request, None when the coordinator takes it.

    v4 and later come from brokers (KIP-890 part 1's verification): CLUSTER_ACTION on the cluster, else
    ``authorizeClusterOperation`` throws ClusterAuthorizationException and the request's error response carries
    CLUSTER_AUTHORIZATION_FAILED as its top-level error, for no transaction; no topic is authorized. v0-3 come from
    clients: WRITE on the transactional id, else every partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then WRITE on
    each partition's topic (``add_partitions_errors``). A refused request never reaches the coordinator, so the
    transaction's partitions do not change. The same at 2.0.1 for v0-3 (``handleAddPartitionToTxnRequest``)."""
    if version >= 4:
        if not allowed(denied, "CLUSTER", "CLUSTER_ACTION", CLUSTER):
            return int(Errors.CLUSTER_AUTHORIZATION_FAILED), {}
        refused = add_partitions_errors(partitions, known)
    elif not allowed(denied, "TRANSACTIONAL_ID", "WRITE", transactional_id):
        return int(Errors.NONE), dict.fromkeys(partitions, int(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
    else:
        refused = add_partitions_errors(partitions, known,
                                        lambda tp: allowed(denied, "TOPIC", "WRITE", tp.rsplit("-", 1)[0]))
    return None if refused is None else (int(Errors.NONE), refused)


def write_txn_markers_authorized(denied: Collection[Denied], *, alter_cluster: bool) -> bool:
    """KafkaApis.handleWriteTxnMarkersRequest's first check: ALTER on the cluster (KAFKA-16513, ef7b48e66ab, PR 15837,
    KIP-1037, first tag 3.8.0; ``alter_cluster``: the version has it), else CLUSTER_ACTION on the cluster; when both
    are denied ``authorizeClusterOperation`` throws ClusterAuthorizationException before any marker is appended (the
    request handler answers every partition of every marker CLUSTER_AUTHORIZATION_FAILED). Before 3.8.0, CLUSTER_ACTION
    only (3.7.1)."""
    if alter_cluster and allowed(denied, "CLUSTER", "ALTER", CLUSTER):
        return True
    return allowed(denied, "CLUSTER", "CLUSTER_ACTION", CLUSTER)


def txn_offset_commit_split(partitions: Sequence[str], known: Callable[[str], bool]) -> tuple[dict[str, int], list[str]]:
    """TxnOffsetCommit: each unknown partition (its topic unknown, or the partition index not in the
    topic) is answered UNKNOWN_TOPIC_OR_PARTITION; the rest go to the group coordinator (when none is
    left, the coordinator is not called)."""
    errors = {tp: int(Errors.UNKNOWN_TOPIC_OR_PARTITION) for tp in partitions if not known(tp)}
    return errors, [tp for tp in partitions if known(tp)]


def marker_partition_error(magic: int | None) -> int | None:
    """WriteTxnMarkers, per partition of a marker: not hosted here (``replicaManager.getMagic`` gives
    nothing) is UNKNOWN_TOPIC_OR_PARTITION, a log below format v2 UNSUPPORTED_FOR_MESSAGE_FORMAT; None:
    the marker is appended."""
    if magic is None:
        return int(Errors.UNKNOWN_TOPIC_OR_PARTITION)
    if magic < MAGIC_V2:
        return int(Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT)
    return None


def marker_errors(partitions: Sequence[str], magic: Mapping[str, int | None]) -> tuple[dict[str, int], list[str]]:
    """Every partition of one marker: the refused ones with their error, and those to append."""
    errors: dict[str, int] = {}
    append: list[str] = []
    for tp in partitions:
        e = marker_partition_error(magic.get(tp))
        if e is None:
            append.append(tp)
        else:
            errors[tp] = e
    return errors, append
