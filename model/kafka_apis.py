"""KafkaApis' checks before a transactional request reaches a coordinator or the log: partitions the
broker's metadata cache does not know (AddPartitionsToTxn, TxnOffsetCommit) and partitions the broker
does not host or whose log is older than message format v2 (WriteTxnMarkers).

Read at apache/kafka 1eb7644 (``KafkaApis.handleAddPartitionsToTxnRequest``, ``handleTxnOffsetCommitRequest``,
``handleWriteTxnMarkersRequest``); 2.0.0, 2.5.0 and 3.0.0 check the same way. Authorization, which comes
first in each, is out of the model's scope. No machine reads this module: the model's partitions all
exist, are hosted and use format v2; the conformance interface does, for KafkaApisTest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .errors import Errors

#: RecordBatch.MAGIC_VALUE_V2: the first format with producer ids and control batches
MAGIC_V2 = 2


def add_partitions_errors(partitions: Sequence[str], known: Callable[[str], bool]) -> dict[str, int] | None:
    """A client's AddPartitionsToTxn (v0-3; a broker's v4 the same): None when every partition is in the
    metadata cache (the coordinator takes the request); otherwise the whole transaction's request is
    refused without reaching the coordinator: UNKNOWN_TOPIC_OR_PARTITION for each unknown partition and
    OPERATION_NOT_ATTEMPTED for the others."""
    unknown = [tp for tp in partitions if not known(tp)]
    if not unknown:
        return None
    return {tp: int(Errors.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown else Errors.OPERATION_NOT_ATTEMPTED)
            for tp in partitions}


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
